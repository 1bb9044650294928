import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Redis } from "ioredis";
import { freePorts } from "../../src/process/ports.js";
import {
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../src/redis/redis-server-process.js";
import { redisKeysOf } from "../../src/store/keys.js";
import { newUser, type TestUser } from "../support/signing.js";
import { waitForReplicaAcks } from "../support/test-redis-sentinel.js";
import { startTestService } from "../support/test-service.js";
import { type Answer, check, create, register } from "../support/timed-calls.js";

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

// A check is one GET on a connection no WAIT ever blocks: it answers in
// milliseconds; the bound leaves room for a loaded two-core host.
const CHECK_MS = 1000;
// A create waits at most a second for a free wait lane, then 500 ms for WAIT
// (REDIS_WAIT_TIMEOUT_MS), then its rollback: about 1.5 s, plus slack.
const CREATE_MS = 3000;

describe("REDIS_MIN_REPLICAS_ACK=1 with no replica left", () => {
  it("checks never wait behind a WAIT; every create answered 503 leaves no token and no name", async () => {
    const root = mkdtempSync(join(tmpdir(), "perps-wait-"));
    const [primaryPort, replicaPort] = await freePorts(2);
    const syncNow = ["--repl-diskless-sync-delay", "0"];
    const servers: RedisServerProcess[] = [];
    const startReplica = async () => {
      const replica = await startRedisServerProcess({
        dir: join(root, "replica"),
        port: replicaPort,
        extraArgs: ["--replicaof", "127.0.0.1", String(primaryPort), ...syncNow],
      });
      servers.push(replica);
      await waitForReplicaAcks(primaryPort);
      return replica;
    };
    servers.push(
      await startRedisServerProcess({
        dir: join(root, "primary"),
        port: primaryPort,
        extraArgs: syncNow,
      }),
    );
    const replica = await startReplica();
    const url = `redis://127.0.0.1:${primaryPort}`;
    const service = await startTestService({ redisUrl: url, redisMinReplicasAck: 1 });
    const direct = new Redis(url, { maxRetriesPerRequest: 0 });
    try {
      const users: TestUser[] = [];
      const kept: string[] = [];
      for (let i = 0; i < 4; i++) {
        const user = await newUser();
        await register(service, user);
        const created = await create(service, user, 0, "kept");
        assert.equal(created.status, 201);
        users.push(user);
        kept.push(created.token ?? "");
      }

      const exited = new Promise((resolve) => replica.child.once("exit", resolve));
      replica.child.kill("SIGKILL");
      await exited;

      // Checks from 4 loops all along, while 60 named creates (15 a user) come
      // in waves of 12, more at once than the wait lanes carry.
      const checks: (Answer & { active: boolean })[] = [];
      let creating = true;
      const checkLoops = kept.map(async (token) => {
        while (creating) {
          checks.push(await check(service, token));
          await sleep(20);
        }
      });
      const creates: { user: TestUser; name: string; answer: Answer }[] = [];
      for (let wave = 0; wave < 5; wave++) {
        await Promise.all(
          users.flatMap((user, u) =>
            [0, 1, 2].map(async (k) => {
              const name = `n${wave}-${k}`;
              const answer = await create(service, user, 1 + wave * 10 + k + u, name);
              creates.push({ user, name, answer });
            }),
          ),
        );
      }
      creating = false;
      await Promise.all(checkLoops);

      assert.ok(checks.length >= 40, `only ${checks.length} checks ran`);
      for (const answer of checks) {
        assert.equal(answer.status, 200, `a check answered ${answer.status}`);
        assert.ok(answer.active, "a live token was refused");
      }
      const slowestCheck = Math.max(...checks.map((c) => c.ms));
      assert.ok(slowestCheck < CHECK_MS, `a check took ${Math.round(slowestCheck)} ms`);
      assert.equal(creates.length, 60);
      for (const { answer } of creates) {
        assert.equal(answer.status, 503, "a create no replica confirmed was acknowledged");
        assert.ok(answer.ms < CREATE_MS, `a create took ${Math.round(answer.ms)} ms`);
      }
      // Give a write that might still be in flight time to land, then look at Redis itself.
      await sleep(1500);
      for (const user of users) {
        const keys = redisKeysOf(user.userId);
        assert.deepEqual(await direct.hkeys(keys.nameIds), ["kept"]);
        assert.deepEqual(await direct.zrange(keys.names, 0, -1), ["kept"]);
        assert.equal(await direct.zcard(keys.live), 1, "a 503'd create left a live token");
      }
      console.log(
        `no replica: ${checks.length} checks, slowest ${Math.round(slowestCheck)} ms; ` +
          `60 creates all 503, slowest ${Math.round(Math.max(...creates.map((c) => c.answer.ms)))} ms`,
      );

      // With a replica back, a retry finds each name free.
      await startReplica();
      const user = users[0];
      assert.ok(user !== undefined);
      const retried = await create(service, user, 100, "n0-0");
      assert.equal(retried.status, 201);
    } finally {
      direct.disconnect();
      await service.stop();
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(root, { recursive: true, force: true });
    }
  });
});
