import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { freePorts } from "../../src/process/ports.js";
import { register } from "../support/forward-auth-calls.js";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { restJson } from "../support/rest-json.js";
import { newUser, signedDelete, type TestUser } from "../support/signing.js";
import { startTestRedisSentinel } from "../support/test-redis-sentinel.js";
import { authStatus, createToken } from "../support/token-cache-checks.js";

after(killMainProcesses);

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

// Planned failovers in a row; each takes about 10 s (the promotion, the old
// primary's resync, the sentinel's next look at it).
const ROUNDS = 5;
// Deletes sent 100 ms apart from SENTINEL FAILOVER on, past the switch.
const DELETES_PER_ROUND = 20;
const SPACING_MS = 100;
// A delete answered 503 is retried (signed anew) this long at most.
const RETRY_MS = 20_000;

let sent = 0;
/** A signed delete over REST: its status, whatever it is. */
async function deleteStatus(publicUrl: string, user: TestUser, tokenId: string): Promise<number> {
  const res = await fetch(`${publicUrl}/user/tokens`, {
    method: "DELETE",
    headers: { "content-type": "application/json", connection: "close" },
    body: restJson(
      await signedDelete(user, tokenId, { timestamp: BigInt(Date.now() + (sent++ % 1000)) }),
    ),
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Deletes until the service says it is done: 200, or 404 on a retry (an
 * earlier attempt's deletion, confirmed now); each 503 retried, signed anew.
 * Resolves with every status answered, in order.
 */
async function deleteUntilDone(publicUrl: string, user: TestUser, tokenId: string) {
  const statuses: number[] = [];
  const deadline = Date.now() + RETRY_MS;
  for (;;) {
    const status = await deleteStatus(publicUrl, user, tokenId);
    statuses.push(status);
    if (status === 200 || (status === 404 && statuses.length > 1)) {
      return statuses;
    }
    assert.equal(status, 503, `a delete answered ${statuses.join(", ")}`);
    assert.ok(Date.now() < deadline, `a delete still 503 after ${RETRY_MS} ms`);
    await sleep(200);
  }
}

/** Each token refused by `/auth`, asked 3 times on connections of their own (any worker). */
async function assertAllRefused(internalUrl: string, tokens: readonly string[], when: string) {
  for (const token of tokens) {
    for (let i = 0; i < 3; i++) {
      assert.equal(await authStatus(internalUrl, token), 401, `${when}: a deleted token is live`);
    }
  }
}

/** npm start's process at its defaults on `sentinel`, with `workers` workers, and its URLs. */
async function startOnSentinel(
  sentinel: Awaited<ReturnType<typeof startTestRedisSentinel>>,
  workers: number,
) {
  const [publicPort, internalPort] = await freePorts(2);
  const main = startMainProcess({
    REDIS_SENTINELS: sentinel.topology.sentinels.map((s) => `${s.host}:${s.port}`).join(","),
    REDIS_SENTINEL_NAME: sentinel.topology.name,
    WORKERS: String(workers),
    PUBLIC_PORT: String(publicPort),
    INTERNAL_PORT: String(internalPort),
  });
  const service = {
    publicUrl: `http://127.0.0.1:${publicPort}`,
    internalUrl: `http://127.0.0.1:${internalPort}`,
    internalAddress: `127.0.0.1:${internalPort}`,
  };
  return { main, service };
}

describe("revocations around Sentinel failovers, at the defaults", () => {
  it(`${ROUNDS} planned failovers, WORKERS=2: a delete acknowledged stays deleted`, async () => {
    const sentinel = await startTestRedisSentinel({ sentinels: 3 });
    const { main, service } = await startOnSentinel(sentinel, 2);
    try {
      await main.waitFor(/"msg":"listening"/, 2);
      const everyDeleted: string[] = [];
      const answers: number[][] = [];
      const switches: { from: number; to: number }[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        // A user each: the per-user rate limit is at its default too.
        const tokens = await Promise.all(
          Array.from({ length: DELETES_PER_ROUND }, async () => {
            const user = await newUser();
            await register(service, user);
            return { user, ...(await createToken(service.publicUrl, user)) };
          }),
        );
        // Checked once, so that the workers' caches hold them when dropped.
        for (const { token } of tokens) {
          assert.equal(await authStatus(service.internalUrl, token), 200);
        }
        const failover = await sentinel.plannedFailover();
        const settled = failover.switched().then(async (to) => {
          switches.push({ from: failover.from, to });
          await failover.settle();
        });
        const outcomes = await Promise.all(
          tokens.map(async ({ user, id }, i) => {
            await sleep(i * SPACING_MS);
            return deleteUntilDone(service.publicUrl, user, id);
          }),
        );
        const lastAnswer = performance.now();
        answers.push(...outcomes);
        const deleted = tokens.map((t) => t.token);
        everyDeleted.push(...deleted);
        await sleep(500);
        await assertAllRefused(service.internalUrl, deleted, `round ${round}, +500 ms`);
        await sleep(Math.max(0, lastAnswer + 2000 - performance.now()));
        await assertAllRefused(service.internalUrl, deleted, `round ${round}, +2 s`);
        await settled;
        const first = outcomes.map((statuses) => statuses[0]);
        console.log(
          `round ${round}: :${failover.from} → :${switches.at(-1)?.to}; first answers ` +
            `${first.filter((s) => s === 200).length}× 200, ${first.filter((s) => s === 503).length}× 503; ` +
            `retries ${outcomes.reduce((n, s) => n + s.length - 1, 0)}`,
        );
      }
      // Later: the old primaries have long been replicas of the new ones.
      await assertAllRefused(service.internalUrl, everyDeleted, "at the end");
      assert.ok(
        answers.some((statuses) => statuses[0] === 503),
        "no delete fell into a failover's window (the test tested nothing)",
      );

      // The log tells of each switch, once per worker (its pid), and of the caches dropped.
      const lines = main
        .output()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      for (const { from, to } of switches) {
        const told = lines.filter(
          (l) =>
            l.msg === "redis primary changed" &&
            l.level === 40 &&
            l.from === `127.0.0.1:${from}` &&
            l.to === `127.0.0.1:${to}`,
        );
        assert.equal(
          new Set(told.map((l) => l.pid)).size,
          2,
          `:${from} → :${to} not told by both workers`,
        );
      }
      const drops = lines.filter((l) => l.msg === "token cache dropped");
      assert.ok(drops.length >= ROUNDS, `only ${drops.length} cache drops logged`);
      assert.ok(drops.every((l) => typeof l.reason === "string" && typeof l.entries === "number"));
      assert.ok(
        drops.some((l) => Number(l.entries) > 0),
        "no drop told of the records it dropped",
      );
    } catch (err) {
      // What the service said, its last batch of lines written out first.
      await sleep(1000);
      console.log(
        main
          .output()
          .split("\n")
          .filter((l) => !l.includes('"code":"ok"'))
          .join("\n"),
      );
      throw err;
    } finally {
      main.child.kill("SIGTERM");
      await main.exitedWithin(15_000);
      await sentinel.dispose();
    }
  });

  it("a Sentinel with no replica: deletes are acknowledged (auto waits for none)", async () => {
    const sentinel = await startTestRedisSentinel({ replicas: 0 });
    const { main, service } = await startOnSentinel(sentinel, 1);
    try {
      await main.waitFor(/"msg":"listening"/);
      const user = await newUser();
      await register(service, user);
      const { id, token } = await createToken(service.publicUrl, user);
      assert.equal(await deleteStatus(service.publicUrl, user, id), 200);
      assert.equal(await authStatus(service.internalUrl, token), 401);
    } finally {
      main.child.kill("SIGTERM");
      await main.exitedWithin(15_000);
      await sentinel.dispose();
    }
  });
});
