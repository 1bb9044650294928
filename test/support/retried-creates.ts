import assert from "node:assert/strict";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { tokenDigest } from "@perps/token-client/protocol";
import { Redis } from "ioredis";
import { liveMemberOf, redisKeysOf } from "../../src/store/keys.js";
import { decodeTokenRecord } from "../../src/store/token-record.js";
import { startMainProcess } from "./main-process.js";
import { restJson } from "./rest-json.js";
import { newUser, signedCreate, type TestUser } from "./signing.js";
import { createOperatorGrpcClient } from "./test-operator.js";

// Callers of fault tests that retry each 503 with the same signed request,
// byte for byte, as a careful client does, and the check that every create
// they were answered 201 for still exists (issue 40).

/**
 * An attempt's rollback is retried for at most this long (durable-writer.ts'
 * undo budget); a check waits it out after the last call, so that a late
 * rollback has run.
 */
export const UNDO_BUDGET_MS = 5000;

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export interface Created {
  user: TestUser;
  id: string;
  token: string;
  name: string | undefined;
  /** Whether a 503 came before the 201. */
  retried: boolean;
}

/** What callers saw: the creates answered 201, and how many answers of each status. */
export interface Tally {
  created: Created[];
  statuses: Map<number, number>;
}

/** The service (`npm start`'s command) as a process of its own, with one worker, and its URLs. */
export async function startRetriedService(env: Record<string, string>) {
  const main = startMainProcess({
    PUBLIC_PORT: "0",
    INTERNAL_PORT: "0",
    WORKERS: "1",
    TOKEN_RATE_LIMIT_PER_MINUTE: "100000",
    TOKEN_MAX_ACTIVE_PER_USER: "100000",
    ...env,
  });
  const [match] = await main.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
  return {
    publicUrl: `http://127.0.0.1:${match?.[1]}`,
    internalUrl: `http://127.0.0.1:${match?.[2]}`,
    internalAddress: `127.0.0.1:${match?.[2]}`,
  };
}

/** `count` new users, each with a signing key registered on the service. */
export async function registeredUsers(internalAddress: string, count: number) {
  const keys = createOperatorGrpcClient(UserKeyService, internalAddress);
  try {
    const users: TestUser[] = [];
    for (let i = 0; i < count; i++) {
      const user = await newUser();
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      users.push(user);
    }
    return users;
  } finally {
    keys.close();
  }
}

/** The body of a signed create over REST, as a caller keeps it to send again. */
async function createBody(user: TestUser, name: string | undefined): Promise<string> {
  const req = await signedCreate(user, name === undefined ? {} : { name });
  return restJson(req);
}

/**
 * Creates tokens for each user, one after another, until `running()` is
 * false, sending each body again 50 ms after a 503; resolves once every
 * caller has stopped.
 */
export async function retryingCallers(
  publicUrl: string,
  users: readonly TestUser[],
  running: () => boolean,
  tally: Tally,
): Promise<void> {
  const caller = async (user: TestUser) => {
    for (let n = 0; running(); n++) {
      // Half of them named: a rollback also frees (or must keep) a name.
      const name = n % 2 === 0 ? `t${n}` : undefined;
      const body = await createBody(user, name);
      for (let retried = false; ; retried = true) {
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
        }
        if (res.status !== 503) {
          break;
        }
        await sleep(50);
      }
    }
  };
  await Promise.all(users.map(caller));
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
      body: JSON.stringify({ token }),
    },
  );
  const body = (await res.json()) as { active?: boolean };
  return res.status === 200 && body.active === true ? undefined : `introspected ${res.status}`;
}

/**
 * Checks every create answered 201 against the Redis primary on
 * `redisPort` and the service, logs what the callers saw, and fails if one
 * is lost, or if fewer than `minRetried` succeeded after a 503 (the faults
 * then tested nothing).
 */
export async function assertNoneLost(
  redisPort: number,
  internalUrl: string,
  tally: Tally,
  minRetried: number,
): Promise<void> {
  const redis = new Redis({ port: redisPort, maxRetriesPerRequest: 0 });
  try {
    const lost: string[] = [];
    // A batch at a time: one by one, a thousand creates take a while to check.
    for (let i = 0; i < tally.created.length; i += 50) {
      const batch = tally.created.slice(i, i + 50);
      const whys = await Promise.all(batch.map((created) => missing(redis, internalUrl, created)));
      whys.forEach((why, j) => {
        const created = batch[j];
        if (why !== undefined && created !== undefined) {
          lost.push(`${created.id} (${created.retried ? "after a 503" : "first time"}): ${why}`);
        }
      });
    }
    const retried = tally.created.filter((c) => c.retried).length;
    console.log(
      `${tally.created.length} creates answered 201 (${retried} after a 503), ` +
        `answers ${JSON.stringify(Object.fromEntries(tally.statuses))}, lost ${lost.length}`,
    );
    assert.ok(retried >= minRetried, `only ${retried} creates succeeded after a 503`);
    assert.deepEqual(lost, []);
  } finally {
    redis.disconnect();
  }
}
