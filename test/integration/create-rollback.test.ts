import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { generateToken, tokenDigest } from "@perps/token-client/protocol";
import type { Redis } from "ioredis";
import { liveMemberOf, redisKeysOf } from "../../src/store/keys.js";
import { scriptedClient } from "../../src/store/lua-script.js";
import { StoreError } from "../../src/store/store-error.js";
import { encodeTokenRecord } from "../../src/store/token-record.js";
import { ROLLBACK_CREATE } from "../../src/store/token-scripts.js";
import { createTokenStore, type NewToken } from "../../src/store/token-store.js";
import { redisServerSuite } from "../support/redis-server-suite.js";
import { STORE_SETTINGS } from "../support/store-settings.js";
import { storeUser } from "../support/stored-tokens.js";

/** The record a create of `token` stores. */
const recordOf = (token: NewToken) =>
  encodeTokenRecord({
    digest: token.tokenDigest,
    name: token.name ?? "",
    expiresAtMs: token.expiresAtMs,
    extras: {},
  });

/** Another attempt of the same signed request: same message and id, a new bearer token. */
const retryOf = (token: NewToken): NewToken => ({
  ...token,
  tokenDigest: tokenDigest(generateToken(token.userId, token.tokenId)),
});

/** Runs the rollback of `attempt`, as the store sends it (its keys and its own record). */
function rollback(redis: Redis, attempt: NewToken): Promise<number> {
  const keys = redisKeysOf(attempt.userId);
  const client = scriptedClient({ client: redis }, [ROLLBACK_CREATE])();
  return client.perpsRollbackCreate(
    ...ROLLBACK_CREATE.argv(
      {
        token: keys.token(attempt.tokenId),
        names: keys.names,
        live: keys.live,
        replay: keys.replay,
        nameIds: keys.nameIds,
      },
      {
        record: recordOf(attempt),
        name: attempt.name ?? "",
        liveMember: liveMemberOf(attempt.tokenId),
        messageDigest: attempt.messageDigest,
        tokenId: attempt.tokenId,
      },
    ),
  );
}

/** Asserts that `token` is stored whole: its record, name entry, live member and replay mark. */
async function assertWhole(redis: Redis, token: NewToken): Promise<void> {
  const keys = redisKeysOf(token.userId);
  assert.deepEqual(await redis.getBuffer(keys.token(token.tokenId)), recordOf(token));
  assert.equal(
    Number(await redis.zscore(keys.live, liveMemberOf(token.tokenId))),
    token.expiresAtMs,
  );
  assert.notEqual(await redis.zscore(keys.replay, token.messageDigest), null);
  if (token.name !== undefined) {
    assert.equal(Number(await redis.zscore(keys.names, token.name)), token.expiresAtMs);
    assert.equal(await redis.hget(keys.nameIds, token.name), token.tokenId);
  }
}

/** Asserts that nothing of `token`'s create is left: no record, name, live member or replay mark. */
async function assertUndone(redis: Redis, token: NewToken): Promise<void> {
  const keys = redisKeysOf(token.userId);
  assert.equal(
    await redis.exists(keys.token(token.tokenId), keys.live, keys.names, keys.nameIds, keys.replay),
    0,
  );
}

// Issue 40: a create answered 503 and retried with the same signed request
// writes the same keys as its first attempt (the id comes from the message),
// and the first attempt's rollback may run after the retry was answered 201.
describe("the rollback of a create undoes its own attempt only", () => {
  const { redis } = redisServerSuite();

  for (const name of ["retried", undefined]) {
    const kind = name === undefined ? "session" : "named";

    it(`a ${kind} token: the attempt's own rollback undoes all it wrote, so its retry succeeds`, async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const first = (await storeUser(redis))(name, Date.now() + 60_000);
      assert.deepEqual(await store.create(first), { kind: "created" });
      assert.equal(await rollback(redis, first), 1);
      await assertUndone(redis, first);
      const second = retryOf(first);
      assert.deepEqual(await store.create(second), { kind: "created" });
      await assertWhole(redis, second);
    });

    it(`a ${kind} token: a rollback of attempt 1 after attempt 2 created it leaves attempt 2 whole`, async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const first = (await storeUser(redis))(name, Date.now() + 60_000);
      const second = retryOf(first);
      // Attempt 1 never reached Redis (its connection was down), attempt 2 did.
      assert.deepEqual(await store.create(second), { kind: "created" });
      assert.equal(await rollback(redis, first), 0);
      await assertWhole(redis, second);
      // Attempt 1 ran and was undone, its undo ran again (its reply lost), and
      // attempt 3 created the token in between.
      assert.equal(await rollback(redis, second), 1);
      const third = retryOf(first);
      assert.deepEqual(await store.create(third), { kind: "created" });
      assert.equal(await rollback(redis, second), 0);
      await assertWhole(redis, third);
    });
  }

  it("a retry refused while attempt 1 is stored is no create: attempt 1's rollback then frees the request", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const first = (await storeUser(redis))("held", Date.now() + 60_000);
    assert.deepEqual(await store.create(first), { kind: "created" });
    const second = retryOf(first);
    assert.deepEqual(await store.create(second), { kind: "already-created" });
    await assertWhole(redis, first);
    assert.equal(await rollback(redis, first), 1);
    await assertUndone(redis, first);
    assert.deepEqual(await store.create(second), { kind: "created" });
    await assertWhole(redis, second);
  });

  it("a token deleted before its rollback ran: the rollback touches nothing, its message stays used", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const first = (await storeUser(redis))("deleted", Date.now() + 60_000);
    assert.deepEqual(await store.create(first), { kind: "created" });
    assert.deepEqual(await store.delete({ ...first, messageDigest: randomBytes(32) }), {
      kind: "deleted",
    });
    assert.equal(await rollback(redis, first), 0);
    assert.deepEqual(await store.create(retryOf(first)), { kind: "replayed" });
  });

  it("a create that no replica confirmed is rolled back by the store: its retry is created whole", async () => {
    // No replica exists, so WAIT always comes back short.
    const durable = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis },
      minReplicasAck: 1,
      waitTimeoutMs: 20,
    });
    const first = (await storeUser(redis))("unconfirmed", Date.now() + 60_000);
    await assert.rejects(
      durable.create(first),
      (err) => err instanceof StoreError && err.kind === "unconfirmed-write",
    );
    await assertUndone(redis, first);
    const second = retryOf(first);
    assert.deepEqual(
      await createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } }).create(second),
      {
        kind: "created",
      },
    );
    // The first attempt's rollback, had it been retried once more, now finds another's record.
    assert.equal(await rollback(redis, first), 0);
    await assertWhole(redis, second);
  });
});
