import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { createLogger } from "../../../src/log/logger.js";
import { createServiceMetrics } from "../../../src/metrics/service-metrics.js";
import { createAnswerTelemetry } from "../../../src/server/answer-telemetry.js";
import { exchangeOf } from "../../../src/server/exchange.js";

describe("answer telemetry", () => {
  const lines: Record<string, unknown>[] = [];
  const metrics = createServiceMetrics({ processMetrics: false });
  let server: Server;
  let url: string;

  before(async () => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean)) {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        }
        done();
      },
    });
    const telemetry = createAnswerTelemetry({ logger: createLogger({ destination }), metrics });
    server = createServer(
      telemetry.wrap((req, res) => {
        if (req.url === "/throws") {
          throw new Error("a bug");
        }
        if (req.url === "/refused") {
          const exchange = exchangeOf(req);
          if (exchange !== undefined) {
            exchange.method = "pkg.Service/Method";
            exchange.protocol = "rest";
            exchange.message = "no good";
          }
          res.writeHead(429);
          res.end();
          return;
        }
        res.writeHead(200);
        res.end("ok");
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function count(labels: { method: string; protocol: string; code: string }) {
    const metric = await metrics.requests.get();
    const sample = metric.values.find(
      (v) =>
        v.labels.method === labels.method &&
        v.labels.protocol === labels.protocol &&
        v.labels.code === labels.code,
    );
    return sample?.value ?? 0;
  }

  /** Waits for the line of this request id (written when the response closes). */
  async function lineOf(requestId: string): Promise<Record<string, unknown>[]> {
    for (let i = 0; i < 100 && !lines.some((l) => l.requestId === requestId); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return lines.filter((l) => l.requestId === requestId);
  }

  it("a handler that throws answers 500, is logged as INTERNAL and does not take the process with it", async () => {
    const res = await fetch(`${url}/throws`, { headers: { "x-request-id": "thrown-1" } });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("x-request-id"), "thrown-1");
    const found = await lineOf("thrown-1");
    assert.equal(found.length, 1);
    assert.equal(found[0]?.code, "Internal");
    assert.equal(found[0]?.level, 50);
    assert.match(String(found[0]?.cause), /a bug/);
    assert.equal(await count({ method: "http", protocol: "http", code: "internal" }), 1);
  });

  it("labels an answer with what the layer that gave it noted, the code from the status", async () => {
    const res = await fetch(`${url}/refused`, { headers: { "x-request-id": "refused-1" } });
    assert.equal(res.status, 429);
    const found = await lineOf("refused-1");
    assert.equal(found.length, 1);
    assert.equal(found[0]?.method, "pkg.Service/Method");
    assert.equal(found[0]?.protocol, "rest");
    assert.equal(found[0]?.code, "ResourceExhausted");
    assert.equal(found[0]?.message, "no good");
    assert.equal(
      await count({ method: "pkg.Service/Method", protocol: "rest", code: "resource_exhausted" }),
      1,
    );
  });

  it("gives a request without an acceptable id a new UUID", async () => {
    const res = await fetch(`${url}/`, { headers: { "x-request-id": "no spaces please" } });
    const id = res.headers.get("x-request-id") ?? "";
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const found = await lineOf(id);
    assert.equal(found.length, 1);
    assert.equal(found[0]?.code, "ok");
  });
});
