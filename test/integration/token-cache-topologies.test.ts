import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { parseToken } from "@perps/token-client/protocol";
import { Cluster, Redis } from "ioredis";
import { freePorts } from "../../src/process/ports.js";
import { redisKeysOf } from "../../src/store/keys.js";
import { register } from "../support/forward-auth-calls.js";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { restJson } from "../support/rest-json.js";
import { newUser, signedCreate, type TestUser } from "../support/signing.js";
import { startTestRedisServer } from "../support/test-redis.js";
import { startTestRedisCluster } from "../support/test-redis-cluster.js";
import { startTestRedisSentinel } from "../support/test-redis-sentinel.js";
import { startTestService } from "../support/test-service.js";
import {
  authStatus,
  cacheMetrics,
  createToken,
  deleteToken,
  OTHERS_BOUND_MS,
  OWN_BOUND_MS,
  untilElapsed,
  waitUntilCached,
} from "../support/token-cache-checks.js";

after(killMainProcesses);

/** Another client deletes the token's key: every check is refused within the bound. */
async function refusedAfterOthersDelete(
  other: { del(key: string): Promise<number> },
  internalUrl: string,
  token: string,
): Promise<void> {
  await other.del(tokenKey(token));
  await untilElapsed(performance.now(), OTHERS_BOUND_MS);
  assert.equal(await authStatus(internalUrl, token), 401);
}

/** The status of a signed REST create, whatever it is. */
async function createStatus(publicUrl: string, user: TestUser): Promise<number> {
  const res = await fetch(`${publicUrl}/user/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: restJson(await signedCreate(user)),
  });
  await res.arrayBuffer();
  return res.status;
}

function tokenKey(token: string): string {
  const parsed = parseToken(token);
  assert.ok(parsed !== undefined);
  return redisKeysOf(parsed.userId).token(parsed.tokenId);
}

async function registeredUser(service: { internalAddress: string }): Promise<TestUser> {
  const user = await newUser();
  await register(service, user);
  return user;
}

/** Checks until the service answers 200 again (a failover's gap), at most `timeoutMs`. */
async function untilServed(internalUrl: string, token: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while ((await authStatus(internalUrl, token)) !== 200) {
    assert.ok(Date.now() < deadline, `not served again within ${timeoutMs} ms`);
    await untilElapsed(performance.now(), 100);
  }
}

describe("the token cache in every topology", () => {
  it("WORKERS=2: every worker answers from memory, and refuses a deleted token 5 ms after the answer", async () => {
    const redis = await startTestRedisServer();
    const [publicPort, internalPort] = await freePorts(2);
    const main = startMainProcess({
      REDIS_URL: redis.url,
      WORKERS: "2",
      PUBLIC_PORT: String(publicPort),
      INTERNAL_PORT: String(internalPort),
    });
    try {
      await main.waitFor(/"msg":"listening"/, 2);
      const service = {
        publicUrl: `http://127.0.0.1:${publicPort}`,
        internalUrl: `http://127.0.0.1:${internalPort}`,
        internalAddress: `127.0.0.1:${internalPort}`,
      };
      const user = await registeredUser(service);
      const { id, token } = await createToken(service.publicUrl, user);
      // Each check on a connection of its own: both workers take some. Each
      // worker's first check reads Redis, its tracking pair being up.
      const checks = 20;
      const deadline = Date.now() + 10_000;
      let hits = 0;
      while (hits < checks - 2) {
        assert.ok(Date.now() < deadline, "the workers did not answer from memory within 10 s");
        const before = (await cacheMetrics(service.internalUrl)).hits;
        for (let i = 0; i < checks; i++) {
          assert.equal(await authStatus(service.internalUrl, token), 200);
        }
        hits = (await cacheMetrics(service.internalUrl)).hits - before;
      }
      await deleteToken(service.publicUrl, user, id);
      const answered = performance.now();
      await untilElapsed(answered, OWN_BOUND_MS);
      for (let i = 0; i < checks; i++) {
        assert.equal(await authStatus(service.internalUrl, token), 401);
      }
    } finally {
      main.child.kill("SIGTERM");
      await main.exitedWithin(10_000);
      await redis.dispose();
    }
  });

  it("Sentinel: a failover drops the cache (no answer from it in the gap), and the new primary is tracked", async () => {
    const sentinel = await startTestRedisSentinel();
    // The create is confirmed by the replica, so the token survives the failover.
    // WAIT gets room a loaded machine may need: this test is about the cache.
    // TOKEN_CACHE_GRACE_MS=0, the strict cache: nothing from memory in the gap (the grace
    // that rides through it is token-cache-grace.test.ts's).
    const service = await startTestService({
      redis: sentinel.topology,
      redisMinReplicasAck: 1,
      redisWaitTimeoutMs: 2000,
      tokenCacheGraceMs: 0,
    });
    const other = new Redis({
      sentinels: sentinel.topology.sentinels,
      name: sentinel.topology.name,
    });
    other.on("error", () => undefined);
    try {
      const user = await registeredUser(service);
      const { token } = await createToken(service.publicUrl, user);
      await waitUntilCached(service.internalUrl, token);
      const before = await cacheMetrics(service.internalUrl);
      await sentinel.killPrimary();
      // No primary yet: the check asks Redis, which cannot answer.
      assert.equal(await authStatus(service.internalUrl, token), 503);
      assert.ok(
        (await cacheMetrics(service.internalUrl)).drops("connection") > before.drops("connection"),
      );
      await untilServed(service.internalUrl, token);
      await waitUntilCached(service.internalUrl, token);
      // Invalidations now come from the promoted replica.
      await refusedAfterOthersDelete(other, service.internalUrl, token);
    } finally {
      other.disconnect();
      await service.stop();
      await sentinel.dispose();
    }
  });

  it("Cluster: a slot moved to another master (resharding): every check answers, and the cache follows the keys", async () => {
    const cluster = await startTestRedisCluster({ replicasPerPrimary: 0 });
    const service = await startTestService({ redis: cluster.topology });
    const other = new Cluster(cluster.topology.nodes);
    other.on("error", () => undefined);
    try {
      const user = await registeredUser(service);
      const { token } = await createToken(service.publicUrl, user);
      await waitUntilCached(service.internalUrl, token);
      const from = await cluster.primaryPortOf(tokenKey(token));
      const to = (await cluster.primaryPorts()).find((port) => port !== from);
      assert.ok(to !== undefined);
      // While the keys have moved and the slot not yet (the old owner answers
      // ASK), then once the slot has (MOVED): the token is live, 200 each time.
      // A create in the slot while it moves writes keys Redis cannot place
      // yet (TRYAGAIN): 503, to be tried again; once moved, 201.
      const answers: number[] = [];
      let createWhileMoving = 0;
      await cluster.moveSlotOf(tokenKey(token), to, async () => {
        answers.push(await authStatus(service.internalUrl, token));
        createWhileMoving = await createStatus(service.publicUrl, user);
      });
      answers.push(await authStatus(service.internalUrl, token));
      assert.deepEqual(answers, [200, 200]);
      assert.ok([201, 503].includes(createWhileMoving), String(createWhileMoving));
      assert.equal(await cluster.primaryPortOf(tokenKey(token)), to);
      const created = await createToken(service.publicUrl, user);
      await deleteToken(service.publicUrl, user, created.id);
      // The new owner's invalidations reach the cache.
      await waitUntilCached(service.internalUrl, token);
      await refusedAfterOthersDelete(other, service.internalUrl, token);
    } finally {
      other.disconnect();
      await service.stop();
      await cluster.dispose();
    }
  });

  it("Cluster: each master's keys are tracked; a master's failover drops the cache and its successor is tracked", async () => {
    const cluster = await startTestRedisCluster({ nodeTimeoutMs: 1000 });
    const service = await startTestService({ redis: cluster.topology });
    const other = new Cluster(cluster.topology.nodes);
    other.on("error", () => undefined);
    try {
      // A token on each master: each master's invalidations reach the cache.
      const masters = new Map<number, { user: TestUser; token: string }>();
      while (masters.size < 3) {
        const user = await registeredUser(service);
        const port = await cluster.primaryPortOf(redisKeysOf(user.userId).publicKeys);
        if (!masters.has(port)) {
          masters.set(port, { user, token: (await createToken(service.publicUrl, user)).token });
        }
      }
      for (const { token } of masters.values()) {
        await waitUntilCached(service.internalUrl, token);
        await refusedAfterOthersDelete(other, service.internalUrl, token);
      }

      const [victim, { user }] = [...masters.entries()][0] ?? assert.fail("no master");
      const { token } = await createToken(service.publicUrl, user);
      await waitUntilCached(service.internalUrl, token);
      const before = await cacheMetrics(service.internalUrl);
      await cluster.kill(victim);
      await untilServed(service.internalUrl, token);
      const dropped = await cacheMetrics(service.internalUrl);
      assert.ok(
        dropped.drops("connection") + dropped.drops("topology") >
          before.drops("connection") + before.drops("topology"),
      );
      await waitUntilCached(service.internalUrl, token);
      assert.notEqual(await cluster.primaryPortOf(tokenKey(token)), victim);
      await refusedAfterOthersDelete(other, service.internalUrl, token);
    } finally {
      other.disconnect();
      await service.stop();
      await cluster.dispose();
    }
  });
});
