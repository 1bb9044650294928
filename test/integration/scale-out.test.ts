import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { Cluster } from "ioredis";
import { redisKeysOf } from "../../src/store/keys.js";
import { isGrpcError } from "../support/grpc-client.js";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { type Fields, restJson } from "../support/rest-json.js";
import { newUser, signedCreate, signedDelete, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedisServer } from "../support/test-redis.js";
import { startTestRedisCluster } from "../support/test-redis-cluster.js";
import { startTestRedisSentinel } from "../support/test-redis-sentinel.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { until } from "../support/until.js";

interface Answer {
  status: number;
  body: { id?: string; code?: number; message?: string };
  ms: number;
}

async function rest(baseUrl: string, method: "POST" | "DELETE", fields: Fields): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(`${baseUrl}/user/tokens`, {
    method,
    headers: { "content-type": "application/json" },
    body: restJson(fields),
  });
  return {
    status: res.status,
    body: (await res.json()) as Answer["body"],
    ms: Date.now() - started,
  };
}

async function register(service: TestService, user: TestUser): Promise<void> {
  const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
  try {
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
  } finally {
    keys.close();
  }
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe("Redis Cluster failover under load", () => {
  it("answers 503 (never 500, never a hang) during the gap, recovers by itself, and loses no acknowledged token", async () => {
    const cluster = await startTestRedisCluster({ nodeTimeoutMs: 1000 });
    // "fast" waits for no replica at all, revocations included; "durable" for one on every write.
    const fast = await startTestService({ redis: cluster.topology, redisRevokeReplicasAck: 0 });
    const durable = await startTestService({ redis: cluster.topology, redisMinReplicasAck: 1 });
    try {
      // Users whose slot is on the primary that will be killed.
      const victim = await cluster.primaryPortOf(redisKeysOf(randomUUID()).publicKeys);
      const users: TestUser[] = [];
      while (users.length < 4) {
        const user = await newUser();
        if ((await cluster.primaryPortOf(redisKeysOf(user.userId).publicKeys)) === victim) {
          await register(fast, user);
          users.push(user);
        }
      }

      const answers: { at: number; service: "fast" | "durable"; answer: Answer }[] = [];
      const acknowledged: { user: TestUser; id: string }[] = [];
      let running = true;
      let killedAt = Number.POSITIVE_INFINITY;
      const loop = async (user: TestUser, service: TestService, label: "fast" | "durable") => {
        let n = 0;
        while (running) {
          n++;
          const created = await rest(
            service.publicUrl,
            "POST",
            await signedCreate(user, { timestamp: BigInt(Date.now() + n) }),
          );
          answers.push({ at: Date.now(), service: label, answer: created });
          if (created.status === 201 && created.body.id !== undefined) {
            if (label === "durable" && Date.now() < killedAt) {
              acknowledged.push({ user, id: created.body.id });
            } else if (label === "fast") {
              const del = await rest(
                service.publicUrl,
                "DELETE",
                await signedDelete(user, created.body.id),
              );
              answers.push({ at: Date.now(), service: label, answer: del });
            }
          }
          await sleep(20);
        }
      };
      const loops = users.map((u, i) =>
        i % 2 === 0 ? loop(u, fast, "fast") : loop(u, durable, "durable"),
      );
      await sleep(700);
      killedAt = Date.now();
      await cluster.kill(victim);
      // The fast service recovers on its own once a replica is promoted.
      let recoveredAt = 0;
      while (Date.now() - killedAt < 20_000) {
        const last = answers.filter((a) => a.service === "fast" && a.at > killedAt).at(-1);
        const failedSince = answers.some(
          (a) =>
            a.service === "fast" &&
            a.at > killedAt &&
            a.answer.status !== 201 &&
            a.answer.status !== 200,
        );
        if (failedSince && last !== undefined && last.answer.status < 300) {
          recoveredAt = last.at;
          break;
        }
        await sleep(50);
      }
      await sleep(500);
      running = false;
      await Promise.all(loops);

      assert.ok(recoveredAt > 0, "the service did not recover within 20 s");
      const recoveryMs = recoveredAt - killedAt;
      console.log(`failover: first success ${recoveryMs} ms after the primary was killed`);
      // Both services' logs name the slots' primary that went: each service's client learns it at
      // its own next slot-map refresh (every second), which may come after the other's recovery.
      for (const service of [fast, durable]) {
        await until(
          () =>
            service.logs.some(
              (line) =>
                line.includes('"msg":"redis primary changed"') &&
                line.includes(`"from":"127.0.0.1:${victim}"`),
            ),
          10_000,
        );
      }
      assert.ok(recoveryMs < 10_000, `recovery took ${recoveryMs} ms`);
      for (const { answer } of answers) {
        assert.ok(
          [200, 201, 503].includes(answer.status),
          `unexpected ${answer.status} ${JSON.stringify(answer.body)}`,
        );
        assert.ok(answer.ms < 3000, `a request took ${answer.ms} ms`);
      }
      assert.ok(
        answers.some((a) => a.answer.status === 503),
        "the gap was never observed",
      );

      // REDIS_MIN_REPLICAS_ACK=1: every token acknowledged before the kill survived it.
      assert.ok(acknowledged.length > 0);
      const reader = new Cluster(cluster.topology.nodes, { scaleReads: "master" });
      try {
        for (const { user, id } of acknowledged) {
          const key = redisKeysOf(user.userId).token(id);
          assert.equal(await reader.exists(key), 1, `token ${id} lost`);
        }
      } finally {
        reader.disconnect();
      }
    } finally {
      await fast.stop();
      await durable.stop();
      await cluster.dispose();
    }
  });
});

describe("Sentinel-managed primary", () => {
  it("follows the sentinels to the promoted replica; confirmed writes survive the primary", async () => {
    const sentinel = await startTestRedisSentinel();
    // Writes confirmed by a replica (REDIS_MIN_REPLICAS_ACK=1) before the crash...
    const durable = await startTestService({ redis: sentinel.topology, redisMinReplicasAck: 1 });
    // Waits for no replica, revocations included: its delete on the new primary, which has none
    // left, would answer 503 otherwise (docs/operating-at-scale.md, durability).
    const fast = await startTestService({ redis: sentinel.topology, redisRevokeReplicasAck: 0 });
    try {
      const user = await newUser();
      // A 503 "could not confirm" is answered while a just-synced replica is
      // slow to acknowledge; clients retry it, and so does this test (a few times).
      for (let attempt = 1; ; attempt++) {
        try {
          await register(durable, user);
          break;
        } catch (err) {
          if (attempt === 5 || !isGrpcError(err, grpc.status.UNAVAILABLE)) {
            throw err;
          }
        }
      }
      let kept = await rest(durable.publicUrl, "POST", await signedCreate(user, { name: "kept" }));
      for (let attempt = 1; kept.status === 503 && attempt < 5; attempt++) {
        kept = await rest(
          durable.publicUrl,
          "POST",
          await signedCreate(user, { name: "kept", timestamp: BigInt(Date.now() + attempt) }),
        );
      }
      assert.equal(kept.status, 201, JSON.stringify(kept.body));
      await sentinel.killPrimary();
      const killedAt = Date.now();
      let recoveredMs = 0;
      for (let n = 0; Date.now() - killedAt < 20_000; n++) {
        const res = await rest(
          fast.publicUrl,
          "POST",
          await signedCreate(user, { timestamp: BigInt(Date.now() + n) }),
        );
        assert.ok([201, 503].includes(res.status), `${res.status} ${JSON.stringify(res.body)}`);
        assert.ok(res.ms < 3000, `a request took ${res.ms} ms`);
        if (res.status === 201) {
          recoveredMs = Date.now() - killedAt;
          break;
        }
        await sleep(100);
      }
      assert.ok(recoveredMs > 0, "no recovery within 20 s");
      console.log(
        `sentinel failover: first success ${recoveredMs} ms after the primary was killed`,
      );
      // ...are still there on the new primary: the key verified the create above, and the token is found.
      const del = await rest(
        fast.publicUrl,
        "DELETE",
        await signedDelete(user, kept.body.id ?? ""),
      );
      assert.equal(del.status, 200, JSON.stringify(del.body));
    } finally {
      await durable.stop();
      await fast.stop();
      await sentinel.dispose();
    }
  });
});

describe("two service instances on one Redis", () => {
  it("30 concurrent creates of one name spread over both: exactly one succeeds; delete works across", async () => {
    const redis = await startTestRedisServer();
    const a = await startTestService({ redis: redis.topology });
    const b = await startTestService({ redis: redis.topology });
    try {
      const user = await newUser();
      await register(a, user);
      const base = Date.now();
      const requests = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          signedCreate(user, { name: "shared", timestamp: BigInt(base - i) }),
        ),
      );
      const answers = await Promise.all(
        requests.map((req, i) => rest((i % 2 === 0 ? a : b).publicUrl, "POST", req)),
      );
      assert.equal(answers.filter((x) => x.status === 201).length, 1);
      assert.equal(answers.filter((x) => x.status === 409).length, 29);
      const made = await rest(a.publicUrl, "POST", await signedCreate(user, { name: "cross" }));
      const del = await rest(b.publicUrl, "DELETE", await signedDelete(user, made.body.id ?? ""));
      assert.equal(del.status, 200);
      const again = await rest(a.publicUrl, "DELETE", await signedDelete(user, made.body.id ?? ""));
      assert.equal(again.status, 404);
    } finally {
      await a.stop();
      await b.stop();
      await redis.dispose();
    }
  });
});

after(killMainProcesses);

/** The RPC a REST create calls, as the service's log lines name it. */
const CREATE_METHOD = "perps.token.v1.TokenService/CreateToken";

describe("WORKERS and graceful shutdown of the process", () => {
  it("WORKERS=2 runs two processes that share the ports and stop together", async () => {
    const redis = await startTestRedisServer();
    try {
      const main = startMainProcess({
        REDIS_URL: redis.url,
        WORKERS: "2",
        PUBLIC_PORT: "0",
        INTERNAL_PORT: "0",
      });
      const listening = await main.waitFor(/"pid":(\d+),[^\n]*"publicPort":(\d+)/, 2);
      const pids = new Set(listening.map((m) => m[1]));
      const ports = new Set(listening.map((m) => m[2]));
      assert.equal(pids.size, 2, "two worker processes");
      assert.equal(ports.size, 1, "sharing one public port");
      const [port] = [...ports];
      for (let i = 0; i < 20; i++) {
        // A new connection each time, so that the primary spreads them.
        const res = await fetch(`http://127.0.0.1:${port}/healthz`, {
          headers: { connection: "close" },
        });
        assert.equal(res.status, 200);
      }
      main.child.kill("SIGTERM");
      assert.equal(await main.exited, 0);
      assert.equal([...main.output().matchAll(/"msg":"stopped"/g)].length, 3, main.output());
    } finally {
      await redis.dispose();
    }
  });

  it("SIGTERM while requests are in flight: every request that was accepted gets its answer", async () => {
    const redis = await startTestRedisServer();
    try {
      const main = startMainProcess({
        REDIS_URL: redis.url,
        PUBLIC_PORT: "0",
        INTERNAL_PORT: "0",
        TOKEN_RATE_LIMIT_PER_MINUTE: "100000",
        // Debug: a request the service took but did not answer is logged ("request abandoned").
        LOG_LEVEL: "debug",
      });
      const [match] = await main.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
      const publicUrl = `http://127.0.0.1:${match?.[1]}`;
      const grpcAddress = `127.0.0.1:${match?.[2]}`;
      const user = await newUser();
      const keys = createOperatorGrpcClient(UserKeyService, grpcAddress);
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      keys.close();

      let stop = false;
      let answered = 0;
      let refused = 0;
      let reset = 0;
      const cutOff: string[] = [];
      let n = 0;
      const loop = async () => {
        while (!stop) {
          const req = await signedCreate(user, { timestamp: BigInt(Date.now() + n++) });
          try {
            const res = await rest(publicUrl, "POST", req);
            assert.equal(res.status, 201, JSON.stringify(res.body));
            answered++;
          } catch (err) {
            const code = (err as { cause?: { code?: string } }).cause?.code;
            if (code === "ECONNREFUSED") {
              refused++; // Not accepted: the listener was already closed.
              stop = true;
            } else if (code === "ECONNRESET" || code === "UND_ERR_SOCKET") {
              // A connection the kernel queued but the service never accepted is reset when
              // the listener closes; whether the service had the request is checked below.
              reset++;
              stop = true;
            } else {
              cutOff.push(String(code ?? err));
              stop = true;
            }
          }
        }
      };
      const loops = Array.from({ length: 16 }, loop);
      // Signal once the load is really flowing, however busy the machine is.
      while (answered < 30 && !stop) {
        await sleep(20);
      }
      main.child.kill("SIGTERM");
      await Promise.all(loops);
      assert.equal(await main.exited, 0);
      assert.deepEqual(cutOff, [], "requests were cut off");
      assert.ok(answered >= 30, `only ${answered} answered`);
      // Every create the service took was answered, and every answer reached its client: a
      // reset the client saw was of a connection the service never read a request from.
      const lines = main.output().split("\n");
      const served = lines.filter(
        (line) => line.includes('"msg":"request"') && line.includes(`"method":"${CREATE_METHOD}"`),
      );
      assert.equal(served.length, answered, "creates the service answered = answers received");
      assert.equal(
        lines.filter((line) => line.includes('"msg":"request abandoned"')).length,
        0,
        "no request taken and left unanswered",
      );
      console.log(
        `shutdown under load: ${answered} answered, ${refused} refused and ${reset} reset after close`,
      );
    } finally {
      await redis.dispose();
    }
  });
});
