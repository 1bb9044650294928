import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { tokenDigest } from "@perps/token-client/protocol";
import { Redis } from "ioredis";
import { liveMemberOf, redisKeysOf } from "../../src/store/keys.js";
import { decodeTokenRecord } from "../../src/store/token-record.js";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { newUser, signedCreate, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedisServer } from "../support/test-redis.js";

// Issue 40: a create answered 503 whose caller sent the same signed request
// again and got 201 lost its token to the first attempt's rollback, which the
// service retries for up to 5 s after answering. Here the service runs as a
// process, Redis (AOF, fsync on every write, so that what it acknowledged
// survives) is killed with SIGKILL and restarted on its port and folder round
// after round, callers retry every 503 with the same body byte for byte, and
// every create answered 201 must exist at the end.

const ROUNDS = 12;
const CALLERS = 16;
// How long Redis answers between crashes, and how long it stays dead.
const UP_MS = 1500;
const DOWN_MS = 150;
// An attempt's rollback is retried for at most this long (durable-writer.ts'
// undo budget); the check waits it out, so that a late one has run.
const UNDO_BUDGET_MS = 5000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface Created {
  user: TestUser;
  id: string;
  token: string;
  name: string | undefined;
  /** Whether a 503 came before the 201. */
  retried: boolean;
}

/** What the callers saw: the creates answered 201, and how many answers of each status. */
interface Tally {
  created: Created[];
  statuses: Map<number, number>;
}

/** The body of a signed create, as a caller keeps it to send again. */
async function createBody(user: TestUser, name: string | undefined): Promise<string> {
  const req = await signedCreate(user, name === undefined ? {} : { name });
  return JSON.stringify(req, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v));
}

/** Creates tokens for `user` until `running()` is false, sending each body again after a 503. */
async function caller(
  publicUrl: string,
  user: TestUser,
  running: () => boolean,
  tally: Tally,
): Promise<void> {
  for (let n = 0; running(); n++) {
    // Half of them named: a rollback also frees (or must keep) a name.
    const name = n % 2 === 0 ? `t${n}` : undefined;
    const body = await createBody(user, name);
    let retried = false;
    for (;;) {
      const res = await fetch(`${publicUrl}/user/tokens`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const answer = (await res.json()) as { id?: string; token?: string };
      tally.statuses.set(res.status, (tally.statuses.get(res.status) ?? 0) + 1);
      if (res.status === 201) {
        assert.ok(answer.id !== undefined && answer.token !== undefined);
        tally.created.push({ user, id: answer.id, token: answer.token, name, retried });
        break;
      }
      if (res.status !== 503) {
        break;
      }
      retried = true;
      await sleep(50);
    }
  }
}

/** Why an acknowledged token is not whole in Redis or not active on the service; undefined if it is. */
async function missing(
  redis: Redis,
  internalUrl: string,
  { user, id, token, name }: Created,
): Promise<string | undefined> {
  const keys = redisKeysOf(user.userId);
  const record = await redis.getBuffer(keys.token(id));
  if (record === null) {
    return "no record";
  }
  if (decodeTokenRecord(record)?.digest.equals(tokenDigest(token)) !== true) {
    return "another attempt's record";
  }
  if ((await redis.zscore(keys.live, liveMemberOf(id))) === null) {
    return "not counted live";
  }
  if (name !== undefined && (await redis.hget(keys.nameIds, name)) !== id) {
    return "its name is not its own";
  }
  const res = await fetch(
    `${internalUrl}/perps.token.v1.TokenIntrospectionService/IntrospectToken`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"token":"${token}"}`,
    },
  );
  const body = (await res.json()) as { active?: boolean };
  return res.status === 200 && body.active === true ? undefined : `introspected ${res.status}`;
}

describe("acknowledged creates through Redis crashes and retries", () => {
  it(`${ROUNDS} kill -9 and restarts under retried creates: every 201 stays`, async () => {
    const redis = await startTestRedisServer({ extraArgs: ["--appendfsync", "always"] });
    const main = startMainProcess({
      REDIS_URL: redis.url,
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      WORKERS: "1",
      TOKEN_RATE_LIMIT_PER_MINUTE: "100000",
      TOKEN_MAX_ACTIVE_PER_USER: "100000",
    });
    const client = new Redis({ port: redis.port, maxRetriesPerRequest: 0, lazyConnect: true });
    try {
      const [match] = await main.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
      const publicUrl = `http://127.0.0.1:${match?.[1]}`;
      const internalUrl = `http://127.0.0.1:${match?.[2]}`;
      const keys = createOperatorGrpcClient(UserKeyService, `127.0.0.1:${match?.[2]}`);
      const users: TestUser[] = [];
      try {
        for (let i = 0; i < CALLERS; i++) {
          const user = await newUser();
          await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
          users.push(user);
        }
      } finally {
        keys.close();
      }

      let running = true;
      const tally: Tally = { created: [], statuses: new Map() };
      const callers = users.map((user) => caller(publicUrl, user, () => running, tally));
      for (let round = 1; round <= ROUNDS; round++) {
        await sleep(UP_MS);
        await redis.crash();
        await sleep(DOWN_MS);
        await redis.restart();
      }
      await sleep(UP_MS);
      running = false;
      await Promise.all(callers);
      await sleep(UNDO_BUDGET_MS);

      await client.connect();
      const lost: string[] = [];
      for (const created of tally.created) {
        const why = await missing(client, internalUrl, created);
        if (why !== undefined) {
          lost.push(`${created.id} (${created.retried ? "after a 503" : "first time"}): ${why}`);
        }
      }
      const retried = tally.created.filter((c) => c.retried).length;
      console.log(
        `${tally.created.length} creates answered 201 (${retried} after a 503), ` +
          `answers ${JSON.stringify(Object.fromEntries(tally.statuses))}, lost ${lost.length}`,
      );
      // The rounds must have made callers retry, or they test nothing.
      assert.ok(retried >= ROUNDS, `only ${retried} creates succeeded after a 503`);
      assert.deepEqual(lost, []);
    } finally {
      client.disconnect();
      killMainProcesses();
      await redis.dispose();
    }
  });
});
