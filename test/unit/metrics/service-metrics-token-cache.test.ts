import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { createTokenCacheMetrics } from "../../../src/metrics/service-metrics.js";

describe("createTokenCacheMetrics", () => {
  it("registers the cache's metrics and feeds each from its report", async () => {
    const registry = new Registry();
    const cache = createTokenCacheMetrics(registry);
    cache.hit();
    cache.hit();
    cache.miss();
    cache.invalidated(3);
    cache.dropped("heartbeat");
    cache.dropped("flush");
    cache.dropped("heartbeat");
    cache.entries(42);
    cache.lag(0.0003);
    const value = async (name: string) =>
      (await registry.getSingleMetric(name)?.get())?.values.map((v) => [v.labels, v.value]);
    assert.deepEqual(await value("perps_token_cache_hits_total"), [[{}, 2]]);
    assert.deepEqual(await value("perps_token_cache_misses_total"), [[{}, 1]]);
    assert.deepEqual(await value("perps_token_cache_invalidations_total"), [[{}, 3]]);
    assert.deepEqual(await value("perps_token_cache_entries"), [[{}, 42]]);
    assert.deepEqual(await value("perps_token_cache_drops_total"), [
      [{ reason: "heartbeat" }, 2],
      [{ reason: "flush" }, 1],
    ]);
    const lag = await registry.getSingleMetric("perps_token_cache_invalidation_lag_seconds")?.get();
    const bucket = (le: number) => lag?.values.find((v) => v.labels.le === le)?.value;
    assert.equal(bucket(0.00025), 0);
    assert.equal(bucket(0.0005), 1);
  });
});
