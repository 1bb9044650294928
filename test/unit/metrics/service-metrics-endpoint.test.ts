import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  createMetricsEndpoint,
  createServiceMetrics,
} from "../../../src/metrics/service-metrics.js";

describe("createMetricsEndpoint", () => {
  const metrics = createServiceMetrics({ processMetrics: false });
  let text: () => Promise<string> = () => metrics.registry.metrics();
  const endpoint = createMetricsEndpoint(metrics, () => text());
  const plain = createMetricsEndpoint(metrics);
  let server: Server;
  let base = "";

  before(async () => {
    server = createServer((req, res) => {
      const answered =
        req.headers["x-plain"] === undefined ? endpoint.answer(req, res) : plain.answer(req, res);
      if (!answered) {
        res.writeHead(404).end("not mine\n");
      }
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((done) => server.close(() => done())));

  it("GET /metrics: the exposition, in Prometheus's content type", async () => {
    metrics.tokensCreated.inc();
    const asked: Record<string, string>[] = [{}, { "x-plain": "1" }];
    for (const headers of asked) {
      const res = await fetch(`${base}/metrics?x=1`, { headers });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), metrics.registry.contentType);
      assert.match(await res.text(), /^perps_token_tokens_created_total 1$/m);
    }
  });

  it("HEAD /metrics: the headers alone, with the length of the body a GET gets", async () => {
    text = async () => "a_metric 1\n";
    const res = await fetch(`${base}/metrics`, { method: "HEAD" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-length"), "11");
    assert.equal(await res.text(), "");
  });

  it("is no answer for other paths or methods", async () => {
    assert.equal((await fetch(`${base}/metricsx`)).status, 404);
    assert.equal((await fetch(`${base}/metrics`, { method: "POST" })).status, 404);
  });

  it("500 when the metrics cannot be had (a worker whose primary does not answer)", async () => {
    text = () => Promise.reject(new Error("no primary"));
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 500);
    assert.equal(await res.text(), "metrics unavailable\n");
  });
});
