import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createTrackedReaders, type TrackedReaders } from "../../../src/redis/tracked-readers.js";
import {
  type InvalidationLagProbe,
  startInvalidationLagProbe,
} from "../../../src/store/token-record-cache.js";
import { redisServerSuite } from "../../support/redis-server-suite.js";
import { until } from "../../support/until.js";

// The probe over real tracking connections of a private redis-server.
describe("startInvalidationLagProbe", () => {
  const { redis } = redisServerSuite();

  /** A probe whose key's invalidations reach it, as the token cache wires them. */
  function probeOver(intervalMs: number) {
    const lags: number[] = [];
    const probes: { probe?: InvalidationLagProbe } = {};
    const pairs: TrackedReaders = createTrackedReaders({
      redis,
      events: {
        invalidated(keys) {
          if (keys?.some((key) => key.toString() === probes.probe?.key) === true) {
            probes.probe?.arrived();
          }
        },
        lost() {},
      },
    });
    const probe = startInvalidationLagProbe({
      redis: { client: redis },
      pairs: () => pairs,
      intervalMs,
      lag: (seconds) => lags.push(seconds),
    });
    probes.probe = probe;
    const stop = () => {
      probe.stop();
      pairs.close();
    };
    return { probe, lags, stop };
  }

  it("times each write of its key until the invalidation arrives", async () => {
    const { probe, lags, stop } = probeOver(50);
    try {
      assert.match(probe.key, new RegExp(`^perps:cache-probe:${process.pid}:`));
      await until(() => lags.length >= 2);
      for (const seconds of lags) {
        assert.ok(seconds > 0 && seconds < 1, `${seconds} s`);
      }
      // The key expires after three intervals.
      const ttl = await redis.pttl(probe.key);
      assert.ok(ttl > 0 && ttl <= 150, `${ttl} ms`);
    } finally {
      stop();
    }
  });

  it("an arrival with no write timed tells nothing", () => {
    const { probe, lags, stop } = probeOver(0);
    try {
      probe.arrived();
      assert.deepEqual(lags, []);
    } finally {
      stop();
    }
  });

  it("an interval of 0 never probes", async () => {
    const { probe, stop } = probeOver(0);
    try {
      await sleep(200);
      assert.equal(await redis.exists(probe.key), 0);
    } finally {
      stop();
    }
  });

  it("stops writing once stopped", async () => {
    const { probe, lags, stop } = probeOver(30);
    try {
      await until(() => lags.length >= 1);
      // The pairs stay up: only the probe stops.
      probe.stop();
      await redis.del(probe.key);
      await sleep(150);
      assert.equal(await redis.exists(probe.key), 0);
    } finally {
      stop();
    }
  });
});
