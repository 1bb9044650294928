import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import pino from "pino";
import { createCheckTally } from "../../../src/check-lane/check-tally.js";
import { createServiceMetrics } from "../../../src/metrics/service-metrics.js";

const KIND = {
  method: "perps.token.v1.TokenIntrospectionService/IntrospectToken",
  protocol: "grpc",
};

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { lines, logger: pino({ level }, out) };
}

describe("the check tally", () => {
  it("counts the lane's checks in the request metrics, timed, and writes no line for each", async () => {
    const { lines, logger } = capture("info");
    const metrics = createServiceMetrics({ processMetrics: false });
    const tally = createCheckTally({ logger, metrics, summaryMs: 60_000 });
    const counter = tally.counter(KIND, "internal");
    for (let i = 0; i < 5; i++) {
      counter.live(undefined, 0.0002);
    }
    counter.live("caller-1", 0.003);
    const calls = (await metrics.requests.get()).values.find((v) => v.labels.code === "ok");
    assert.deepEqual(calls?.labels, { ...KIND, code: "ok" });
    assert.equal(calls?.value, 6);
    const duration = await metrics.requestDuration.get();
    const count = duration.values.find((v) => v.metricName?.endsWith("_count"));
    const fast = duration.values.find((v) => (v.labels as Record<string, unknown>).le === 0.0005);
    assert.equal(count?.value, 6);
    assert.equal(fast?.value, 5);
    const introspected = (await metrics.introspections.get()).values[0];
    assert.deepEqual([introspected?.labels, introspected?.value], [{ outcome: "active" }, 6]);
    assert.equal(lines.length, 0, "no line per check");
    tally.stop();
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.msg, "checks answered");
    assert.deepEqual(lines[0]?.checks, { internal: { live: 6, notLive: 0 } });
    assert.equal(lines[0]?.slowestMs, 3);
  });

  it("summarizes the pipeline's checks beside the lane's, and writes nothing for a period without any", async () => {
    const { lines, logger } = capture("info");
    const tally = createCheckTally({
      logger,
      metrics: createServiceMetrics({ processMetrics: false }),
      summaryMs: 50,
    });
    tally.summarize("internal", "notLive", 0.01);
    tally.summarize("public", "live", 0.002);
    await new Promise((resolve) => setTimeout(resolve, 180));
    tally.stop();
    assert.equal(lines.length, 1, "one line for the period with checks, none for the others");
    assert.deepEqual(lines[0]?.checks, {
      internal: { live: 0, notLive: 1 },
      public: { live: 1, notLive: 0 },
    });
    assert.equal(lines[0]?.slowestMs, 10);
  });

  it("writes a line per check at debug level", () => {
    const { lines, logger } = capture("debug");
    const tally = createCheckTally({
      logger,
      metrics: createServiceMetrics({ processMetrics: false }),
    });
    assert.equal(tally.lineEach, true);
    tally.counter(KIND, "internal").live("r-1", 0.001);
    assert.equal(lines.length, 1);
    assert.deepEqual(
      [lines[0]?.msg, lines[0]?.requestId, lines[0]?.code, lines[0]?.method],
      ["request", "r-1", "ok", KIND.method],
    );
    tally.stop();
  });
});
