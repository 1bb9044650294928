import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { hostFacts } from "../../src/config/config.js";
import { freePorts } from "../../src/process/ports.js";
import { killMainProcesses, type MainProcess, startMainProcess } from "../support/main-process.js";
import { samples } from "../support/prometheus-samples.js";
import { type Fields, restJson } from "../support/rest-json.js";
import { newUser, signedCreate, signedDelete, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedisServer, type TestRedis } from "../support/test-redis.js";

after(killMainProcesses);

/** Creates this file sent: the count every /metrics scrape must show. */
let creates = 0;

/** One request on a connection of its own, so that the kernel or the primary picks a worker anew. */
async function call(
  url: string,
  method: string,
  fields?: Fields,
): Promise<{ status: number; body: { id?: string; message?: string } }> {
  if (method === "POST") {
    creates++;
  }
  const res = await fetch(url, {
    method,
    headers: { "content-type": "application/json", connection: "close" },
    ...(fields === undefined
      ? {}
      : {
          body: restJson(fields),
        }),
  });
  return { status: res.status, body: (await res.json()) as { id?: string; message?: string } };
}

describe("WORKERS=2: what must be shared lives in Redis", () => {
  let redis: TestRedis;
  let main: MainProcess;
  let api: string;
  let internal: string;

  it("starts two workers on fixed ports (SO_REUSEPORT where the runtime has it)", async () => {
    redis = await startTestRedisServer();
    const [publicPort, internalPort] = await freePorts(2);
    main = startMainProcess({
      REDIS_URL: redis.url,
      WORKERS: "2",
      PUBLIC_PORT: String(publicPort),
      INTERNAL_PORT: String(internalPort),
      TOKEN_RATE_LIMIT_PER_MINUTE: "6",
      TOKEN_MAX_ACTIVE_PER_USER: "3",
      WORKER_SEMI_SPACE_MB: "2",
    });
    const [started] = await main.waitFor(/"reusePort":(true|false),"msg":"started workers"/);
    assert.equal(started?.[1], String(hostFacts().reusePortSupported));
    const listening = await main.waitFor(/"pid":(\d+),[^\n]*"msg":"listening"/, 2);
    assert.equal(new Set(listening.map((m) => m[1])).size, 2);
    // Each worker starts with the semi-space cap (WORKER_SEMI_SPACE_MB); the primary does not.
    if (process.platform === "linux") {
      const argv = (pid: string | number | undefined) =>
        readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      for (const [, pid] of listening) {
        assert.ok(argv(pid).includes("--max-semi-space-size=2"), `worker ${pid}: ${argv(pid)}`);
      }
      assert.ok(!argv(main.child.pid).some((a) => a.startsWith("--max-semi-space-size")));
    }
    api = `http://127.0.0.1:${publicPort}`;
    internal = `127.0.0.1:${internalPort}`;
  });

  async function registered(): Promise<TestUser> {
    const user = await newUser();
    const keys = createOperatorGrpcClient(UserKeyService, internal);
    try {
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    } finally {
      keys.close();
    }
    return user;
  }

  it("the live-token cap holds across workers", async () => {
    const user = await registered();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const fields = await signedCreate(user, { timestamp: BigInt(Date.now() + i) });
      statuses.push((await call(`${api}/user/tokens`, "POST", fields)).status);
    }
    assert.deepEqual(statuses, [201, 201, 201, 429, 429]);
  });

  it("the per-user rate limit holds across workers", async () => {
    const user = await registered();
    const statuses: number[] = [];
    // Create and delete in turn (one live token at a time): 8 signed calls against a limit of 6.
    for (let i = 0; i < 4; i++) {
      const created = await call(
        `${api}/user/tokens`,
        "POST",
        await signedCreate(user, { timestamp: BigInt(Date.now() + i) }),
      );
      statuses.push(created.status);
      if (created.body.id !== undefined) {
        const deleted = await call(
          `${api}/user/tokens`,
          "DELETE",
          await signedDelete(user, created.body.id),
        );
        statuses.push(deleted.status);
      }
    }
    assert.deepEqual(statuses.slice(0, 6), [201, 200, 201, 200, 201, 200]);
    assert.equal(statuses[6], 429, JSON.stringify(statuses));
  });

  it("a signed request is accepted once, whichever worker gets the copy", async () => {
    const user = await registered();
    const fields = await signedCreate(user, { name: "once" });
    const answers = [];
    for (let i = 0; i < 4; i++) {
      answers.push(await call(`${api}/user/tokens`, "POST", fields));
    }
    assert.deepEqual(
      answers.map((a) => a.status),
      [201, 409, 409, 409],
    );
    assert.match(answers[1]?.body.message ?? "", /Signature already used/);
  });

  it("/metrics answers for the whole service on every scrape, whichever worker takes it", async () => {
    for (let scrape = 0; scrape < 6; scrape++) {
      const res = await fetch(`http://${internal}/metrics`, { headers: { connection: "close" } });
      assert.equal(res.status, 200);
      const counted = [...samples(await res.text())]
        .filter(([name]) =>
          name.startsWith(
            'perps_token_requests_total{method="perps.token.v1.TokenService/CreateToken"',
          ),
        )
        .reduce((sum, [, value]) => sum + value, 0);
      assert.equal(counted, creates, `scrape ${scrape} counted ${counted} of ${creates} creates`);
    }
  });

  it("a worker that dies is replaced, counted in perps_token_worker_restarts_total", async () => {
    const scrape = async () =>
      samples(
        await (
          await fetch(`http://${internal}/metrics`, { headers: { connection: "close" } })
        ).text(),
      );
    assert.equal((await scrape()).get("perps_token_worker_restarts_total"), 0);
    assert.equal((await scrape()).get("perps_token_ready"), 1);
    const [first] = await main.waitFor(/"pid":(\d+),[^\n]*"msg":"listening"/);
    // Its log lines are written in batches (at the latest after 100 ms): let it write them
    // before the kill, so that the last test still finds every create's line.
    await new Promise((done) => setTimeout(done, 500));
    const killed = Number(first?.[1]);
    process.kill(killed, "SIGKILL");
    const [died] = await main.waitFor(/\{[^\n]*"msg":"worker died; starting another"[^\n]*/);
    // The raw text: JSON.parse would keep the last of two `pid`s, and so do log pipelines.
    const keys = [...(died?.[0] ?? "").matchAll(/[{,]"(\w+)":/g)].map((m) => m[1]);
    assert.deepEqual(keys, [...new Set(keys)], died?.[0]);
    const line = JSON.parse(died?.[0] ?? "") as Record<string, unknown>;
    assert.equal(line.workerPid, killed);
    assert.equal(line.pid, main.child.pid, "the line's pid is the primary's");
    assert.equal(line.signal, "SIGKILL");
    // Two from the start, one from the new worker.
    await main.waitFor(/"pid":(\d+),[^\n]*"msg":"listening"/, 3);
    for (let i = 0; i < 4; i++) {
      const metrics = await scrape();
      assert.equal(metrics.get("perps_token_worker_restarts_total"), 1, `scrape ${i}`);
      assert.equal(metrics.get("perps_token_ready"), 1, `scrape ${i}`);
    }
  });

  it("stops both workers and the primary on SIGTERM", async () => {
    main.child.kill("SIGTERM");
    assert.equal(await main.exitedWithin(15_000), 0);
    const output = main.output();
    assert.equal([...output.matchAll(/"msg":"stopped"/g)].length, 3, output);
    // The log is flushed by now: each create's line names the worker that answered it.
    const answered = [
      ...output.matchAll(/"pid":(\d+),[^\n]*"method":"perps.token.v1.TokenService\/CreateToken"/g),
    ];
    assert.equal(answered.length, creates);
    assert.equal(new Set(answered.map((m) => m[1])).size, 2, "creates went to both workers");
    await redis.dispose();
  });
});
