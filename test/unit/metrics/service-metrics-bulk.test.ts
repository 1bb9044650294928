import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  addObservations,
  createServiceMetrics,
  LATENCY_BUCKETS,
} from "../../../src/metrics/service-metrics.js";

const labels = { method: "m", protocol: "grpc" };
const seconds = [0.0001, 0.0004, 0.0007, 0.002, 0.02, 0.3, 2, 9, 0.0001];

/** The counts of `addObservations` for these values: by the first bound each is at most, the last past all. */
function bucketed(values: readonly number[]): number[] {
  const counts = new Array<number>(LATENCY_BUCKETS.length + 1).fill(0);
  for (const value of values) {
    const i = LATENCY_BUCKETS.findIndex((bound) => value <= bound);
    counts[i < 0 ? LATENCY_BUCKETS.length : i] += 1;
  }
  return counts;
}

describe("addObservations", () => {
  it("exposes what observing each value would, into a new series or one that holds some", async () => {
    for (const before of [[], [0.001, 0.05]]) {
      const observed = createServiceMetrics({ processMetrics: false });
      const added = createServiceMetrics({ processMetrics: false });
      for (const value of [...before, ...seconds]) {
        observed.requestDuration.observe(labels, value);
      }
      for (const value of before) {
        added.requestDuration.observe(labels, value);
      }
      const sum = seconds.reduce((a, b) => a + b, 0);
      addObservations(added.requestDuration, labels, bucketed(seconds), sum);
      const text = async (m: typeof observed) =>
        (await m.registry.getSingleMetricAsString("perps_token_request_duration_seconds"))
          // The sums differ in their last digits by the order they were added in.
          .replace(/_sum\{[^}]*\} [0-9.e-]+/, "_sum");
      assert.equal(await text(added), await text(observed));
      const [observedSum, addedSum] = await Promise.all(
        [observed, added].map(async (m) =>
          (await m.requestDuration.get()).values.find((v) => v.metricName?.endsWith("_sum")),
        ),
      );
      assert.ok(Math.abs((observedSum?.value ?? 0) - (addedSum?.value ?? -1)) < 1e-9);
    }
  });

  it("runs the flushes asked for before the request metrics are read", async () => {
    const metrics = createServiceMetrics({ processMetrics: false });
    let pending = 3;
    metrics.beforeCollect(() => {
      metrics.requests.inc({ ...labels, code: "ok" }, pending);
      pending = 0;
    });
    const read = async () =>
      (await metrics.requests.get()).values.find((v) => v.labels.code === "ok")?.value;
    assert.equal(await read(), 3);
    assert.equal(await read(), 3, "a flush adds only what came since");
  });
});
