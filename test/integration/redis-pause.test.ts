import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Redis } from "ioredis";
import { freePort } from "../../src/process/ports.js";
import { startRedisServerProcess } from "../../src/redis/redis-server-process.js";
import { redisKeysOf } from "../../src/store/keys.js";
import { newUser } from "../support/signing.js";
import { startTestService } from "../support/test-service.js";
import { type Answer, check, create, register } from "../support/timed-calls.js";

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

// The bounds docs/operating-at-scale.md states: a check is one read, given up after
// 1 s; a write already sent waits for the connection's earlier batch (up to
// its 1 s command timeout), then its own, then up to 250 ms for its rollback.
// Margin for a loaded two-core host (timers and the HTTP round trip run
// late there): half a second on each.
const CHECK_503_MS = 1000 + 500;
const CREATE_503_MS = 2250 + 500;
// Calls sent after the pause ends are served by the same connection at once.
const RESUMED_MS = 1000;

describe("Redis paused (SIGSTOP) for 3 s", () => {
  it("every answer in the pause is a 503 within the stated bound; none leaves a token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "perps-pause-"));
    const server = await startRedisServerProcess({
      dir,
      port: await freePort(),
      appendOnly: true,
    });
    const url = `redis://127.0.0.1:${server.port}`;
    // The bounds of Redis' own commands: with the token cache on, a check of a
    // cached token answers from memory until the invalidation channel's
    // heartbeat declares it lost (about a second, docs/security.md).
    const service = await startTestService({ redisUrl: url, tokenCacheMaxEntries: 0 });
    const direct = new Redis(url, { maxRetriesPerRequest: 0 });
    const pid = server.child.pid;
    assert.ok(pid !== undefined);
    try {
      const user = await newUser();
      await register(service, user);
      const kept = await create(service, user, 0, "kept");
      assert.equal(kept.status, 201);
      const token = kept.token ?? "";

      let paused = 0;
      let resumed = 0;
      let running = true;
      const checks: (Answer & { startedAt: number })[] = [];
      const creates: (Answer & { startedAt: number; name: string })[] = [];
      const checkLoop = async () => {
        while (running) {
          const startedAt = Date.now();
          checks.push({ ...(await check(service, token)), startedAt });
        }
      };
      const createLoop = async (loop: number) => {
        for (let n = 1; running; n++) {
          const startedAt = Date.now();
          const name = `p${loop}-${n}`;
          creates.push({
            ...(await create(service, user, loop * 1000 + n, name)),
            startedAt,
            name,
          });
          await sleep(50);
        }
      };
      const loops = [
        checkLoop(),
        checkLoop(),
        checkLoop(),
        checkLoop(),
        createLoop(1),
        createLoop(2),
      ];
      await sleep(300);
      process.kill(pid, "SIGSTOP");
      paused = Date.now();
      await sleep(3000);
      process.kill(pid, "SIGCONT");
      resumed = Date.now();
      await sleep(1500);
      running = false;
      await Promise.all(loops);

      const inPause = <T extends { startedAt: number; ms: number }>(answers: T[]) =>
        answers.filter((a) => a.startedAt >= paused && a.startedAt + a.ms <= resumed);
      const seen = (answers: (Answer & { startedAt: number })[]) =>
        answers.map((a) => `${a.startedAt - paused}+${Math.round(a.ms)}:${a.status}`).join(" ");
      // Calls made within the pause all fail; every failure, those of calls
      // begun just before it included, comes within the bound.
      for (const answer of [...inPause(checks), ...inPause(creates)]) {
        assert.equal(answer.status, 503, `${seen(checks)} / ${seen(creates)}`);
      }
      const pausedChecks = checks.filter((c) => c.status === 503);
      const pausedCreates = creates.filter((c) => c.status === 503);
      assert.ok(pausedChecks.length >= 4, `checks: ${seen(checks)}`);
      assert.ok(pausedCreates.length >= 2, `creates: ${seen(creates)}`);
      for (const answer of [...checks, ...creates]) {
        assert.ok([200, 201, 503].includes(answer.status), `${answer.status}`);
      }
      for (const answer of pausedChecks) {
        assert.ok(answer.ms < CHECK_503_MS, `a check's 503 took ${Math.round(answer.ms)} ms`);
      }
      for (const answer of pausedCreates) {
        assert.ok(answer.ms < CREATE_503_MS, `a create's 503 took ${Math.round(answer.ms)} ms`);
      }
      const after = (answers: (Answer & { startedAt: number })[]) =>
        answers.filter((a) => a.startedAt >= resumed + 100);
      assert.ok(after(checks).length > 0 && after(creates).length > 0);
      for (const answer of [...after(checks), ...after(creates)]) {
        assert.ok(answer.status === 200 || answer.status === 201, `${answer.status} after`);
        assert.ok(answer.ms < RESUMED_MS, `an answer after the pause took ${answer.ms} ms`);
      }
      // Every create answered 503 (its command may have run once Redis went
      // on) holds no name: its rollback ran after it on the same connection.
      await sleep(500);
      const held = new Set(await direct.hkeys(redisKeysOf(user.userId).nameIds));
      const failed = creates.filter((c) => c.status === 503);
      assert.ok(failed.length > 0);
      for (const { name } of failed) {
        assert.ok(!held.has(name), `the 503'd create of ${name} holds its name`);
      }
      const created = creates.filter((c) => c.status === 201).length;
      assert.equal(await direct.zcard(redisKeysOf(user.userId).live), created + 1);
      const slowest = (answers: Answer[]) => Math.round(Math.max(...answers.map((a) => a.ms)));
      console.log(
        `pause: ${pausedChecks.length} checks' 503 within ${slowest(pausedChecks)} ms, ` +
          `${pausedCreates.length} creates' within ${slowest(pausedCreates)} ms`,
      );
    } finally {
      process.kill(pid, "SIGCONT");
      direct.disconnect();
      await service.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
