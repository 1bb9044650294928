import assert from "node:assert/strict";
import { once } from "node:events";
import { connect, createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Exchange } from "../../../../src/server/exchange.js";
import { takeStreamsFirst } from "../../../../src/server/listener/http2-server.js";

describe("stream takeover", () => {
  let h2: Http2Server;
  /** Paths of the streams `taken` was told of, each with its exchange's id. */
  const taken: [string, string][] = [];
  before(async () => {
    h2 = createServer((req, res) => res.end(`compat ${req.url}`));
    takeStreamsFirst(
      h2,
      (stream, headers) => {
        if (headers[":path"] !== "/taken") {
          return undefined;
        }
        stream.respond({ ":status": 200 });
        stream.end("taken");
        return new Exchange(`id-${taken.length}`, performance.now());
      },
      (stream: ServerHttp2Stream, taker) => {
        assert.ok(taker instanceof Exchange);
        taken.push([String(stream.sentHeaders[":status"]), taker.requestId]);
      },
    );
    h2.listen(0, "127.0.0.1");
    await once(h2, "listening");
  });
  after(async () => {
    h2.close();
    await once(h2, "close");
  });

  /** The body of a GET of `path` over a new session. */
  async function get(path: string): Promise<string> {
    const session = connect(`http://127.0.0.1:${(h2.address() as AddressInfo).port}`);
    try {
      const stream = session.request({ ":path": path });
      stream.end();
      let body = "";
      stream.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      await once(stream, "end");
      return body;
    } finally {
      session.close();
    }
  }

  it("serves the streams it takes itself and tells of each with its exchange", async () => {
    assert.equal(await get("/taken"), "taken");
    assert.deepEqual(taken, [["200", "id-0"]]);
  });

  it("leaves every other stream to node's compatibility layer, untouched", async () => {
    const before = taken.length;
    assert.equal(await get("/other"), "compat /other");
    assert.equal(taken.length, before);
  });

  it("refuses to stand before anything but node's one compatibility listener", () => {
    const other = createServer((_req, res) => res.end());
    other.on("stream", () => {});
    assert.throws(
      () =>
        takeStreamsFirst(
          other,
          () => undefined,
          () => {},
        ),
      /expected node's one compatibility 'stream' listener, found 2/,
    );
  });
});
