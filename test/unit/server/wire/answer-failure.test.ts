import assert from "node:assert/strict";
import { createServer as createHttp1Server, request } from "node:http";
import { connect, createServer as createHttp2Server, type ServerHttp2Stream } from "node:http2";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { NodeServerResponse } from "../../../../src/http/node-handler.js";
import { Exchange } from "../../../../src/server/exchange.js";
import { callError, detach, failAnswer } from "../../../../src/server/wire/answer-failure.js";
import { serverPool } from "../../../support/server-pool.js";
import { send } from "../../../support/wire-exchange.js";

describe("a call's failure", () => {
  it("is answered as it is when a ConnectError, else INTERNAL with the reason as its cause", () => {
    const refusal = new ConnectError("no", Code.PermissionDenied);
    assert.equal(callError(refusal), refusal);
    const bug = new TypeError("undefined is not a function");
    const internal = callError(bug);
    assert.equal(internal.code, Code.Internal);
    assert.equal(internal.rawMessage, "internal error");
    assert.equal(internal.cause, bug);
  });

  it("of an answer left to finish on its own is no unhandled rejection", async () => {
    detach(Promise.reject(new Error("the client is gone")));
    detach(undefined);
    // An unhandled rejection would fail this test once the microtasks ran.
    await new Promise((resolve) => setImmediate(resolve));
  });
});

describe("the service's own failure while answering", () => {
  // The exchange of each request, by its x-n header; none for x-n "none".
  const exchanges = new Map<string, Exchange>();
  // How each request ended on the server: whether its answer's target was destroyed.
  const ended = new Map<string, { destroyed: boolean }>();
  const pool = serverPool();
  const ports = { http1: 0, http2: 0, stream: 0 };

  /** Does to `to` what the request's path says, then fails the answer. */
  function answer(to: NodeServerResponse | ServerHttp2Stream, path: string, n: string) {
    const exchange = n === "none" ? undefined : new Exchange(`req-${n}`, 0);
    if (exchange !== undefined) {
      exchanges.set(n, exchange);
    }
    const fail = () => {
      failAnswer(to, exchange, new Error("a bug"));
      // node's HTTP/2 response tells it by its stream; a stream reset is closed at once, destroyed later.
      const target = "stream" in to ? to.stream : to;
      ended.set(n, { destroyed: target.destroyed || ("closed" in target && target.closed) });
    };
    if (path === "/begun") {
      // The answer has begun: only the end of the stream can say it failed.
      if ("respond" in to) {
        to.respond({ ":status": 200 });
      } else {
        to.writeHead(200);
      }
      to.write("part", () => setTimeout(fail, 20));
    } else if (path === "/gone") {
      to.once("close", () => setImmediate(fail));
    } else {
      fail();
    }
  }

  /** Waits until the server has the request `n` (a fixed pause is not enough on a loaded machine). */
  async function seenByServer(n: string): Promise<void> {
    for (let i = 0; i < 500 && !exchanges.has(n); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(exchanges.has(n), "the server has the request");
  }

  before(async () => {
    const compat = (
      req: { url?: string; headers: Record<string, unknown> },
      res: NodeServerResponse,
    ) => answer(res, req.url ?? "", String(req.headers["x-n"]));
    ports.http1 = await pool.listen(createHttp1Server(compat));
    ports.http2 = await pool.listen(createHttp2Server(compat));
    const raw = createHttp2Server();
    raw.on("stream", (stream, headers) =>
      answer(stream, String(headers[":path"]), String(headers["x-n"])),
    );
    ports.stream = await pool.listen(raw);
  });
  after(() => pool.closeAll());

  let counter = 0;
  const nextN = () => String(counter++);

  it("is an empty 500, on node's HTTP/1.1 and HTTP/2 responses and on raw HTTP/2 streams alike", async () => {
    for (const [port, http2] of [
      [ports.http1, false],
      [ports.http2, true],
      [ports.stream, true],
    ] as const) {
      const n = nextN();
      const res = await send(port, { http2, path: "/fail", headers: { "x-n": n }, body: "" });
      assert.equal(res.status, 500);
      assert.equal(res.body.length, 0);
      assert.equal(exchanges.get(n)?.code, Code.Internal);
      assert.equal(exchanges.get(n)?.message, "Error: a bug", "its cause, for the log");
    }
  });

  it("carries the request id on a raw stream, which no listener gave it", async () => {
    const n = nextN();
    const res = await send(ports.stream, {
      http2: true,
      path: "/fail",
      headers: { "x-n": n },
      body: "",
    });
    assert.equal(res.headers["x-request-id"], `req-${n}`);
    const none = await send(ports.stream, {
      http2: true,
      path: "/fail",
      headers: { "x-n": "none" },
      body: "",
    });
    assert.equal(none.status, 500);
    assert.equal(none.headers["x-request-id"], undefined);
  });

  it("cuts an answer that has begun so that the client can tell: HTTP/1.1's connection, HTTP/2's stream reset with INTERNAL_ERROR", async () => {
    const n1 = nextN();
    const cut = await new Promise<{ body: string; aborted: boolean }>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port: ports.http1, path: "/begun", headers: { "x-n": n1 } },
        (res) => {
          let body = "";
          let aborted = false;
          res.on("data", (chunk: Buffer) => {
            body += chunk.toString();
          });
          res.on("aborted", () => {
            aborted = true;
          });
          res.on("error", () => {});
          res.on("close", () => resolve({ body, aborted }));
        },
      );
      req.on("error", reject);
      req.end();
    });
    assert.deepEqual(cut, { body: "part", aborted: true });
    assert.equal(ended.get(n1)?.destroyed, true);
    assert.equal(exchanges.get(n1)?.code, Code.Internal);
    for (const port of [ports.http2, ports.stream]) {
      const n = nextN();
      await assert.rejects(
        send(port, { http2: true, path: "/begun", headers: { "x-n": n }, body: "" }),
        (err: NodeJS.ErrnoException) =>
          err.code === "ERR_HTTP2_STREAM_ERROR" && err.message.includes("NGHTTP2_INTERNAL_ERROR"),
      );
      assert.equal(ended.get(n)?.destroyed, true);
      assert.equal(exchanges.get(n)?.code, Code.Internal);
    }
  });

  it("does nothing once the client is gone", async () => {
    for (const [port, http2] of [
      [ports.http1, false],
      [ports.http2, true],
      [ports.stream, true],
    ] as const) {
      const n = nextN();
      if (http2) {
        const session = connect(`http://127.0.0.1:${port}`);
        const stream = session.request({ ":path": "/gone", "x-n": n });
        stream.on("error", () => {});
        await seenByServer(n);
        session.destroy();
      } else {
        const req = request({ host: "127.0.0.1", port, path: "/gone", headers: { "x-n": n } });
        req.on("error", () => {});
        req.end();
        await seenByServer(n);
        req.destroy();
      }
      for (let i = 0; i < 100 && !ended.has(n); i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.ok(ended.has(n), "the server saw the client go");
      assert.equal(exchanges.get(n)?.code, undefined, "nothing recorded: no answer was failed");
    }
  });
});
