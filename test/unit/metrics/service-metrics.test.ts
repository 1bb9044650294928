import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createServiceMetrics, observeRedis } from "../../../src/metrics/service-metrics.js";

/** A metric's samples as `[labels, value]`, from the registry's JSON. */
async function samples(
  metrics: ReturnType<typeof createServiceMetrics>,
  name: string,
): Promise<[Record<string, string | number>, number][]> {
  const metric = metrics.registry.getSingleMetric(name);
  assert.ok(metric !== undefined, name);
  return (await metric.get()).values.map((v) => [
    v.labels as Record<string, string | number>,
    v.value,
  ]);
}

describe("createServiceMetrics", () => {
  it("registers the service's metrics in a registry of its own, process metrics only if asked", async () => {
    const bare = createServiceMetrics({ processMetrics: false });
    const names = (await bare.registry.getMetricsAsJSON()).map((m) => m.name).sort();
    assert.deepEqual(names, [
      "perps_token_grant_refusals_total",
      "perps_token_introspections_total",
      "perps_token_open_connections",
      "perps_token_ready",
      "perps_token_redis_duration_seconds",
      "perps_token_redis_errors_total",
      "perps_token_request_duration_seconds",
      "perps_token_requests_total",
      "perps_token_tokens_created_total",
      "perps_token_tokens_deleted_total",
      "perps_token_worker_restarts_total",
    ]);
    const full = createServiceMetrics();
    assert.ok(full.registry.getSingleMetric("process_cpu_user_seconds_total") !== undefined);
    assert.notEqual(full.registry, bare.registry);
  });

  it("perps_token_ready asks at each scrape; ready by default", async () => {
    let ready = true;
    const metrics = createServiceMetrics({ processMetrics: false, ready: async () => ready });
    assert.deepEqual(await samples(metrics, "perps_token_ready"), [[{}, 1]]);
    ready = false;
    assert.deepEqual(await samples(metrics, "perps_token_ready"), [[{}, 0]]);
    const always = createServiceMetrics({ processMetrics: false });
    assert.deepEqual(await samples(always, "perps_token_ready"), [[{}, 1]]);
  });
});

describe("observeRedis", () => {
  it("times every call by operation and counts the failed ones", async () => {
    const metrics = createServiceMetrics({ processMetrics: false });
    const observe = observeRedis(metrics);
    observe("createToken", 0.002, false);
    observe("createToken", 0.003, true);
    observe("lookupToken", 0.0004, false);
    const counts = (await samples(metrics, "perps_token_redis_duration_seconds")).filter(
      ([labels]) => labels.le === "+Inf",
    );
    assert.deepEqual(counts, [
      [{ le: "+Inf", operation: "createToken" }, 2],
      [{ le: "+Inf", operation: "lookupToken" }, 1],
    ]);
    assert.deepEqual(await samples(metrics, "perps_token_redis_errors_total"), [
      [{ operation: "createToken" }, 1],
    ]);
  });
});
