import assert from "node:assert/strict";
import { once } from "node:events";
import { describe, it } from "node:test";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { newUser, signedCreate, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedisServer } from "../support/test-redis.js";
import { startTestRedisSentinel } from "../support/test-redis-sentinel.js";
import { startTestService, type TestService } from "../support/test-service.js";

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface Answer {
  status: number;
  ms: number;
  token?: string;
}

async function create(service: TestService, user: TestUser, n: number): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${service.publicUrl}/user/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(
      await signedCreate(user, { timestamp: BigInt(Date.now() + n) }),
      (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v),
    ),
  });
  const body = (await res.json()) as { token?: string };
  return {
    status: res.status,
    ms: performance.now() - started,
    ...(body.token === undefined ? {} : { token: body.token }),
  };
}

/** IntrospectToken over Connect: 200 with `active` for a live token, 503 while Redis is away. */
async function check(service: TestService, token: string): Promise<Answer & { active: boolean }> {
  const started = performance.now();
  const res = await fetch(
    `${service.internalUrl}/perps.token.v1.TokenIntrospectionService/IntrospectToken`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
    },
  );
  const body = (await res.json()) as { active?: boolean };
  return { status: res.status, ms: performance.now() - started, active: body.active === true };
}

async function register(service: TestService, user: TestUser): Promise<void> {
  const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
  try {
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
  } finally {
    keys.close();
  }
}

/**
 * Calls `call` every 50 ms until it answers 200, for at most `limitMs`;
 * every answer meanwhile must be 503 and come within `answerMs`.
 * Resolves with the time from `since` to the first 200.
 */
async function recovery(
  since: number,
  limitMs: number,
  answerMs: number,
  call: (n: number) => Promise<Answer>,
): Promise<number> {
  for (let n = 0; Date.now() - since < limitMs; n++) {
    const answer = await call(n);
    assert.ok(answer.ms < answerMs, `an answer took ${Math.round(answer.ms)} ms`);
    if (answer.status === 200 || answer.status === 201) {
      return Date.now() - since;
    }
    assert.equal(answer.status, 503);
    await sleep(50);
  }
  return assert.fail(`no success within ${limitMs} ms`);
}

describe("a Redis client that closed for good", () => {
  it("is replaced: calls succeed again within 3 s, readiness follows", async () => {
    const redis = await startTestRedisServer();
    const service = await startTestService({ redisUrl: redis.url });
    try {
      const user = await newUser();
      await register(service, user);
      const created = await create(service, user, 0);
      assert.equal(created.status, 201);
      const token = created.token ?? "";
      // What ioredis does when it gives up (status "end"), e.g. when a Sentinel
      // failover detector disconnects it while it resolves the new primary.
      const closed = service.redis;
      const ended = once(closed, "end");
      closed.disconnect();
      await ended;
      const since = Date.now();
      const recoveredMs = await recovery(since, 3000, 1500, () => check(service, token));
      assert.ok((await check(service, token)).active);
      assert.equal((await fetch(`${service.publicUrl}/readyz`)).status, 200);
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
      const user = await newUser();
      await register(service, user);
      const created = await create(service, user, 0);
      assert.equal(created.status, 201);
      const token = created.token ?? "";
      for (let round = 1; round <= 20; round++) {
        const { killedAt } = await sentinel.failOver();
        const checkMs = await recovery(killedAt, FAILOVER_RECOVERY_MS, GAP_ANSWER_MS, () =>
          check(service, token),
        );
        assert.ok((await check(service, token)).active, `round ${round}: the token is gone`);
        const createMs = await recovery(killedAt, FAILOVER_RECOVERY_MS, GAP_ANSWER_MS, (n) =>
          create(service, user, round * 1000 + n),
        );
        recoveries.push(Math.max(checkMs, createMs));
        assert.equal((await fetch(`${service.publicUrl}/readyz`)).status, 200);
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
