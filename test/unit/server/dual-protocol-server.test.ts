import assert from "node:assert/strict";
import { connect as connectH2 } from "node:http2";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  createDualProtocolServer,
  type DualProtocolServer,
} from "../../../src/server/dual-protocol-server.js";
import { LISTENER_LIMITS } from "../../support/store-settings.js";

describe("dual-protocol server", () => {
  let server: DualProtocolServer;
  before(async () => {
    server = createDualProtocolServer({
      ...LISTENER_LIMITS,
      host: "127.0.0.1",
      port: 0,
      headersTimeoutMs: 300,
      requestTimeoutMs: 1000,
      maxConcurrentStreams: 7,
      handler: (req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(`HTTP/${req.httpVersion}`);
      },
    });
    await server.listen();
  });
  after(() => server.close(100));

  it("answers HTTP/1.1 and h2c on one port", async () => {
    assert.equal(await (await fetch(`http://127.0.0.1:${server.port}/`)).text(), "HTTP/1.1");
    const session = connectH2(`http://127.0.0.1:${server.port}`);
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ":path": "/" });
        let body = "";
        stream.on("data", (c: Buffer) => {
          body += c.toString();
        });
        stream.on("end", () => resolve(body));
        stream.on("error", reject);
      });
      assert.equal(text, "HTTP/2.0");
      assert.equal(session.remoteSettings.maxConcurrentStreams, 7);
    } finally {
      session.close();
    }
  });

  /** Opens a raw connection, sends `bytes`, and resolves with how long until the server closed it. */
  function closedAfter(bytes: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const socket = connect(server.port, "127.0.0.1", () => {
        if (bytes !== "") {
          socket.write(bytes);
        }
      });
      socket.on("data", () => {});
      socket.on("error", reject);
      socket.on("close", () => resolve(Date.now() - started));
      setTimeout(() => {
        socket.destroy();
        reject(new Error("the server kept the connection open"));
      }, 5000).unref();
    });
  }

  it("closes a connection that sends nothing", async () => {
    const ms = await closedAfter("");
    assert.ok(ms >= 250 && ms < 2000, `closed after ${ms} ms`);
  });

  it("closes a slow client that never finishes its headers (slowloris)", async () => {
    const ms = await closedAfter("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    assert.ok(ms < 4000, `closed after ${ms} ms`);
  });
});
