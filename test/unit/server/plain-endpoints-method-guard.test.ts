import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import type { Endpoint } from "../../../src/http/endpoint.js";
import { attachExchange, Exchange } from "../../../src/server/exchange.js";
import { createMethodGuard } from "../../../src/server/plain-endpoints.js";

describe("the plain endpoints' method guard", () => {
  const exchanges: Exchange[] = [];
  let server: Server;
  let base = "";

  /** Starts a listener asking `guard`, with a 404 for what it passes on. */
  async function serve(guard: Endpoint) {
    server = createServer((req, res) => {
      const exchange = new Exchange("id", 0);
      exchanges.push(exchange);
      attachExchange(req, exchange);
      if (!guard.answer(req, res)) {
        res.writeHead(404);
        res.end("passed on");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  describe("with the default methods (GET, HEAD)", () => {
    before(() => serve(createMethodGuard({ paths: ["/healthz", "/metrics"] })));
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("answers another method on a guarded path 405 with Allow, in the service's error shape", async () => {
      exchanges.length = 0;
      const res = await fetch(`${base}/metrics?x=1`, { method: "POST", body: "x" });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get("allow"), "GET, HEAD");
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.deepEqual(await res.json(), {
        code: Code.Unimplemented,
        message: "method POST is not allowed here",
        details: [],
      });
      assert.equal(exchanges[0]?.code, Code.Unimplemented);
    });

    it("passes on the allowed methods, and other paths whatever their method", async () => {
      for (const [method, path] of [
        ["GET", "/healthz"],
        ["HEAD", "/metrics"],
        ["POST", "/other"],
        ["PUT", "/healthz/x"],
      ] as const) {
        const res = await fetch(`${base}${path}`, { method });
        assert.equal(res.status, 404, `${method} ${path}`);
        await res.arrayBuffer();
      }
    });
  });

  describe("with methods of its own", () => {
    before(() => serve(createMethodGuard({ paths: ["/x"], allow: ["GET", "POST"] })));
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("allows those, and names them in Allow", async () => {
      const post = await fetch(`${base}/x`, { method: "POST" });
      assert.equal(await post.text(), "passed on");
      const put = await fetch(`${base}/x`, { method: "PUT" });
      assert.equal(put.status, 405);
      assert.equal(put.headers.get("allow"), "GET, POST");
      await put.arrayBuffer();
    });
  });
});
