import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createHealthEndpoints } from "../../../src/server/plain-endpoints.js";
import type { Readiness } from "../../../src/server/readiness.js";

describe("health endpoints", () => {
  let ready: Readiness = "ready";
  const health = createHealthEndpoints(async () => ready);
  let server: Server;
  let base = "";

  before(async () => {
    server = createServer((req, res) => {
      if (!health.answer(req, res)) {
        res.writeHead(404);
        res.end("passed on");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("are health probes (their answers are debug lines)", () => {
    assert.equal(health.probe, true);
  });

  it("/healthz: 200 while the process serves, whatever the readiness", async () => {
    ready = "not ready";
    const res = await fetch(`${base}/healthz?from=balancer`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.deepEqual(await res.json(), { status: "ok" });
  });

  it("/readyz: 200 while ready or serving from cache, 503 when not", async () => {
    ready = "ready";
    const yes = await fetch(`${base}/readyz`);
    assert.equal(yes.status, 200);
    assert.deepEqual(await yes.json(), { status: "ready" });
    ready = "not ready";
    const no = await fetch(`${base}/readyz`);
    assert.equal(no.status, 503);
    assert.equal(no.headers.get("cache-control"), "no-store");
    assert.deepEqual(await no.json(), { status: "not ready" });
    // Redis cannot answer, but checks are served from the cache's grace: kept in rotation.
    ready = "serving from cache";
    const grace = await fetch(`${base}/readyz`);
    assert.equal(grace.status, 200);
    assert.deepEqual(await grace.json(), { status: "serving from cache" });
  });

  it("HEAD: the same status and headers, no body", async () => {
    ready = "not ready";
    const get = await fetch(`${base}/readyz`);
    const body = await get.text();
    const head = await fetch(`${base}/readyz`, { method: "HEAD" });
    assert.equal(head.status, 503);
    assert.equal(head.headers.get("content-length"), String(Buffer.byteLength(body)));
    assert.equal(await head.text(), "");
  });

  it("pass on other methods (the method guard answers them) and other paths", async () => {
    for (const [method, path] of [
      ["POST", "/healthz"],
      ["DELETE", "/readyz"],
      ["GET", "/health"],
      ["GET", "/healthz/x"],
    ] as const) {
      const res = await fetch(`${base}${path}`, { method });
      assert.equal(await res.text(), "passed on", `${method} ${path}`);
    }
  });
});
