import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer as createHttp1Server, request as http1Request } from "node:http";
import { connect, createServer as createHttp2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { lazyCallSignal } from "../../../src/call/call-signal.js";

/** Where the signal of a call stands when it is first asked for after the answer was sent. */
type Seen = { aborted: boolean; code: Code | undefined };

function seenOf(signal: AbortSignal): Seen {
  return {
    aborted: signal.aborted,
    code: signal.reason instanceof ConnectError ? signal.reason.code : undefined,
  };
}

describe("lazyCallSignal", () => {
  it("over HTTP/2, a signal first asked for after the exchange is over is aborted (CANCELLED)", async () => {
    const server = createHttp2Server();
    const seen = new Promise<Seen>((resolve) => {
      server.on("request", (_req, res) => {
        const signal = lazyCallSignal(res);
        res.end("done");
        res.stream.once("close", () => resolve(seenOf(signal())));
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const stream = session.request({ ":path": "/" });
    stream.resume();
    await once(stream, "close");
    assert.deepEqual(await seen, { aborted: true, code: Code.Canceled });
    session.close();
    server.close();
  });

  it("over HTTP/1.1 too", async () => {
    const server = createHttp1Server();
    const seen = new Promise<Seen>((resolve) => {
      server.on("request", (_req, res) => {
        const signal = lazyCallSignal(res);
        res.end("done");
        res.once("close", () => resolve(seenOf(signal())));
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const req = http1Request({
      port: (server.address() as AddressInfo).port,
      host: "127.0.0.1",
      agent: false,
    });
    req.end();
    const [res] = (await once(req, "response")) as [NodeJS.ReadableStream];
    res.resume();
    assert.deepEqual(await seen, { aborted: true, code: Code.Canceled });
    server.close();
  });

  it("aborts with DEADLINE_EXCEEDED at the deadline while the call runs", async () => {
    const server = createHttp2Server();
    const seen = new Promise<Seen>((resolve) => {
      server.on("request", (_req, res) => {
        const signal = lazyCallSignal(res, Date.now() + 50)();
        signal.addEventListener("abort", () => {
          resolve(seenOf(signal));
          res.end();
        });
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const stream = session.request({ ":path": "/" });
    stream.resume();
    assert.deepEqual(await seen, { aborted: true, code: Code.DeadlineExceeded });
    await once(stream, "close");
    session.close();
    server.close();
  });
});
