import assert from "node:assert/strict";
import { once } from "node:events";
import { describe, it } from "node:test";
import { startTestRedisServer } from "../support/test-redis.js";
import { startTestRedisSentinel } from "../support/test-redis-sentinel.js";
import { startTestService } from "../support/test-service.js";
import { check, create, liveToken, recovery } from "../support/timed-calls.js";

describe("a Redis client that closed for good", () => {
  it("is replaced: calls succeed again within 3 s, readiness follows", async () => {
    const redis = await startTestRedisServer();
    const service = await startTestService({ redisUrl: redis.url });
    try {
      const { user, token } = await liveToken(service);
      // What ioredis does when it gives up (status "end"), e.g. when a Sentinel
      // failover detector disconnects it while it resolves the new primary.
      const closed = service.redis;
      const ended = once(closed, "end");
      closed.disconnect();
      await ended;
      const since = Date.now();
      // Readiness asks the service's own client: checks may be answered by the
      // token cache, whose tracking connections are not the client that ended.
      const ready = async () => {
        const sent = Date.now();
        const res = await fetch(`${service.publicUrl}/readyz`);
        await res.arrayBuffer();
        return { status: res.status, ms: Date.now() - sent };
      };
      const recoveredMs = await recovery(since, 3000, 1500, ready);
      assert.ok((await check(service, token)).active);
      assert.notEqual(service.redis, closed);
      assert.equal((await create(service, user, 1)).status, 201);
      assert.ok(service.logs.some((line) => line.includes("redis client replaced")));
      console.log(`closed client replaced; first success after ${recoveredMs} ms`);
    } finally {
      await service.stop();
      await redis.stop();
    }
  });
});

// One failover: detection (down-after-milliseconds 1000), the sentinel's
// election and promotion, the client's reconnection (backoff at most 1 s) or
// its replacement (at most 1 s), plus slack for a loaded two-core host.
const FAILOVER_RECOVERY_MS = 8000;
// A 503 during the gap comes from a command timeout (1 s) or a refused connection.
const GAP_ANSWER_MS = 2500;

describe("Sentinel failovers in a row", () => {
  it("20 failovers: after each, checks and creates succeed again within the bound", async () => {
    const sentinel = await startTestRedisSentinel();
    const service = await startTestService({ redis: sentinel.topology });
    const recoveries: number[] = [];
    try {
      const { user, token } = await liveToken(service);
      for (let round = 1; round <= 20; round++) {
        const { killedAt, rejoin } = await sentinel.failOver();
        const checkMs = await recovery(killedAt, FAILOVER_RECOVERY_MS, GAP_ANSWER_MS, () =>
          check(service, token),
        );
        assert.ok((await check(service, token)).active, `round ${round}: the token is gone`);
        const createMs = await recovery(killedAt, FAILOVER_RECOVERY_MS, GAP_ANSWER_MS, (n) =>
          create(service, user, round * 1000 + n),
        );
        recoveries.push(Math.max(checkMs, createMs));
        console.log(`failover ${round}: check after ${checkMs} ms, create after ${createMs} ms`);
        assert.equal((await fetch(`${service.publicUrl}/readyz`)).status, 200);
        await rejoin();
      }
      recoveries.sort((a, b) => a - b);
      console.log(
        `20 sentinel failovers: recovery after the kill min ${recoveries[0]} ms, ` +
          `median ${recoveries[10]} ms, max ${recoveries[19]} ms`,
      );
    } finally {
      await service.stop();
      await sentinel.dispose();
    }
  });
});
