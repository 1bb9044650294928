import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { generateToken, tokenDigest, tokenIdOf } from "@perps/token-client/protocol";
import type { Redis } from "ioredis";
import { createRedisClient, waitForRedisReady } from "../../src/redis/redis-client.js";
import { redisKeysOf } from "../../src/store/keys.js";
import { createRedisRunner } from "../../src/store/redis-runner.js";
import { StoreError } from "../../src/store/store-error.js";
import { DEFAULT_GRANTS } from "../../src/store/token-grants.js";
import { encodeTokenRecord, TOKEN_RECORD_LAYOUT } from "../../src/store/token-record.js";
import { createTokenStore, type NewToken } from "../../src/store/token-store.js";
import { listAll, listedAs } from "../support/list-all-named.js";
import { redisServerSuite } from "../support/redis-server-suite.js";
import { STORE_SETTINGS } from "../support/store-settings.js";
import { storeUser } from "../support/stored-tokens.js";
import { startTestRedisServer } from "../support/test-redis.js";

/** A new token of a new user whose signing key is registered. */
async function newToken(redis: Redis, name: string | undefined): Promise<NewToken> {
  return (await storeUser(redis))(name, Date.now() + 60_000);
}

/** Asserts that none of these Redis keys exists. */
async function assertNoKeys(redis: Redis, ...keys: string[]): Promise<void> {
  assert.equal(await redis.exists(...keys), 0);
}

/** Asserts that `token`'s record and its user's live, names and name → id keys are gone, and `more`. */
async function assertTokenGone(redis: Redis, token: NewToken, ...more: string[]): Promise<void> {
  const keys = redisKeysOf(token.userId);
  await assertNoKeys(
    redis,
    keys.token(token.tokenId),
    keys.live,
    keys.names,
    keys.nameIds,
    ...more,
  );
}

// The store's scripts against a plain redis-server: binary digests and
// records, and the rollback of a create that no replica confirmed.
describe("token store scripts", () => {
  const { redis } = redisServerSuite();

  for (const name of ["bot ü", undefined]) {
    it(`a ${name === undefined ? "session" : "named"} token: created and deleted as raw bytes`, async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const token = await newToken(redis, name);
      const redisKeys = redisKeysOf(token.userId);
      assert.deepEqual(await store.create(token), { kind: "created" });
      const record = await redis.getBuffer(redisKeys.token(token.tokenId));
      assert.deepEqual(
        record,
        encodeTokenRecord({
          digest: token.tokenDigest,
          name: name ?? "",
          expiresAtMs: token.expiresAtMs,
          extras: {},
        }),
      );
      // The live zset holds the id's raw bytes, so a revocation finds the token from it.
      assert.deepEqual(await redis.zrangeBuffer(redisKeys.live, 0, -1), [
        Buffer.from(token.tokenId, "base64url"),
      ]);
      assert.deepEqual(await redis.zrangeBuffer(redisKeys.replay, 0, -1), [token.messageDigest]);
      assert.deepEqual(
        await redis.zrange(redisKeys.names, 0, -1),
        name === undefined ? [] : [name],
      );
      // The name → id hash holds named tokens only: a session token adds no key.
      assert.deepEqual(
        await redis.hgetall(redisKeys.nameIds),
        name === undefined ? {} : { [name]: token.tokenId },
      );

      const outcome = await store.delete({ ...token, messageDigest: randomBytes(32) });
      assert.deepEqual(outcome, { kind: "deleted" });
      await assertTokenGone(redis, token);
    });
  }

  it("a create never overwrites a live token of its id, even if its message was forgotten", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const token = await newToken(redis, "first");
    const redisKeys = redisKeysOf(token.userId);
    assert.deepEqual(await store.create(token), { kind: "created" });
    const record = await redis.getBuffer(redisKeys.token(token.tokenId));
    // A replay of the message while its token is live names it.
    const replay = {
      ...token,
      tokenDigest: tokenDigest(generateToken(token.userId, token.tokenId)),
      name: "second",
    };
    assert.deepEqual(await store.create(replay), { kind: "already-created" });
    // As if the message's memory were lost (e.g. the service's clock ahead of Redis').
    await redis.zrem(redisKeys.replay, token.messageDigest);
    assert.deepEqual(await store.create(replay), { kind: "already-created" });
    assert.deepEqual(await redis.getBuffer(redisKeys.token(token.tokenId)), record);
    assert.deepEqual(await redis.zrange(redisKeys.names, 0, -1), ["first"]);
    assert.equal(await redis.zcard(redisKeys.live), 1);
    // Once the token is gone, a replay is a plain one.
    await store.delete({ ...token, messageDigest: randomBytes(32) });
    assert.deepEqual(await store.create(replay), { kind: "replayed" });
  });

  it("a refused create is remembered: its replay is refused as such", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const first = await newToken(redis, "taken");
    assert.deepEqual(await store.create(first), { kind: "created" });
    const messageDigest = randomBytes(32);
    const second = { ...first, messageDigest, tokenId: tokenIdOf(messageDigest) };
    assert.deepEqual(await store.create(second), { kind: "name-taken" });
    assert.deepEqual(await store.delete({ ...first, messageDigest: randomBytes(32) }), {
      kind: "deleted",
    });
    assert.deepEqual(await store.create(second), { kind: "replayed" });
  });

  it("a token whose live member predates ids (its digest's first 8 bytes) still leaves the count on delete", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const token = await newToken(redis, undefined);
    const redisKeys = redisKeysOf(token.userId);
    assert.deepEqual(await store.create(token), { kind: "created" });
    // As a create before the live zset held ids wrote it.
    await redis.del(redisKeys.live);
    await redis.zadd(redisKeys.live, token.expiresAtMs, token.tokenDigest.subarray(0, 8));
    assert.deepEqual(await store.delete({ ...token, messageDigest: randomBytes(32) }), {
      kind: "deleted",
    });
    await assertNoKeys(redis, redisKeys.live);
  });

  it("revokeAll finds tokens by their live member and named ones by name, in one step", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const session = await newToken(redis, undefined);
    const named = { ...(await newToken(redis, "named")), userId: session.userId };
    const legacy = { ...(await newToken(redis, "legacy")), userId: session.userId };
    for (const token of [session, named, legacy]) {
      assert.deepEqual(await store.create(token), { kind: "created" });
    }
    const redisKeys = redisKeysOf(session.userId);
    // A named token whose live member predates ids is still found by its name.
    await redis.zrem(redisKeys.live, Buffer.from(legacy.tokenId, "base64url"));
    await redis.zadd(redisKeys.live, legacy.expiresAtMs, legacy.tokenDigest.subarray(0, 8));
    assert.equal(await store.revokeAll(session.userId), 3);
    await assertNoKeys(
      redis,
      ...[session, named, legacy].map((t) => redisKeys.token(t.tokenId)),
      redisKeys.live,
      redisKeys.names,
      redisKeys.nameIds,
    );
    assert.equal(await store.revokeAll(session.userId), 0);
  });

  it("a create that no replica confirmed is undone, so its retry succeeds", async () => {
    // No replica exists, so WAIT always comes back short.
    const durable = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis },
      minReplicasAck: 1,
      waitTimeoutMs: 20,
    });
    const token = await newToken(redis, "retried");
    const redisKeys = redisKeysOf(token.userId);
    await assert.rejects(
      durable.create(token),
      (err) => err instanceof StoreError && err.kind === "unconfirmed-write",
    );
    await assertTokenGone(redis, token, redisKeys.replay);
    // Same message, same name: neither is taken any more.
    const fast = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    assert.deepEqual(await fast.create(token), { kind: "created" });
  });

  describe("listNamed", () => {
    /** Another token of the same user, with its own message. */
    function sibling(token: NewToken, name: string | undefined, expiresAtMs = token.expiresAtMs) {
      const messageDigest = randomBytes(32);
      const tokenId = tokenIdOf(messageDigest);
      return {
        ...token,
        messageDigest,
        tokenId,
        tokenDigest: tokenDigest(generateToken(token.userId, tokenId)),
        name,
        expiresAtMs,
      };
    }
    const sortedByName = (list: { name: string }[]) =>
      [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

    it("lists the user's live named tokens with id and exact expiry, never session tokens", async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const first = await newToken(redis, "alpha");
      const second = sibling(first, "beta ü", first.expiresAtMs + 1234);
      const session = sibling(first, undefined);
      for (const t of [first, second, session]) {
        assert.deepEqual(await store.create(t), { kind: "created" });
      }
      const other = await newToken(redis, "alpha");
      assert.deepEqual(await store.create(other), { kind: "created" });
      assert.deepEqual(sortedByName(await listAll(store, first.userId)), [
        listedAs(first, "alpha"),
        listedAs(second, "beta ü"),
      ]);
      assert.deepEqual(await listAll(store, first.userId.toUpperCase()), [
        ...(await listAll(store, first.userId)),
      ]);
      assert.deepEqual(await listAll(store, other.userId), [listedAs(other, "alpha")]);
      assert.deepEqual(await listAll(store, randomUUID()), []);
    });

    it("a user with only session tokens lists nothing and has no name keys", async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const token = await newToken(redis, undefined);
      assert.deepEqual(await store.create(token), { kind: "created" });
      assert.deepEqual(await store.create(sibling(token, undefined)), { kind: "created" });
      assert.deepEqual(await listAll(store, token.userId), []);
      const redisKeys = redisKeysOf(token.userId);
      await assertNoKeys(redis, redisKeys.names, redisKeys.nameIds);
    });

    it("a deleted token is gone from the list at once", async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const kept = await newToken(redis, "kept");
      const gone = sibling(kept, "gone");
      await store.create(kept);
      await store.create(gone);
      assert.equal((await listAll(store, kept.userId)).length, 2);
      await store.delete({ ...gone, messageDigest: randomBytes(32) });
      assert.deepEqual(
        (await listAll(store, kept.userId)).map((t) => t.id),
        [kept.tokenId],
      );
      assert.deepEqual(await redis.hkeys(redisKeysOf(kept.userId).nameIds), ["kept"]);
    });

    it("an expired token is not listed once Redis's clock passes its expiry, and its entry is pruned with its name", async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const kept = await newToken(redis, "kept");
      const redisKeys = redisKeysOf(kept.userId);
      const [seconds, micros] = await redis.time();
      const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      const brief = sibling(kept, "brief", redisNow + 300);
      await store.create(kept);
      await store.create(brief);
      assert.equal((await listAll(store, kept.userId)).length, 2);
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.deepEqual(
        (await listAll(store, kept.userId)).map((t) => t.name),
        ["kept"],
      );
      // The next named create prunes the expired name from both indexes.
      assert.deepEqual(await redis.hexists(redisKeys.nameIds, "brief"), 1);
      await store.create(sibling(kept, "next"));
      assert.deepEqual((await redis.hkeys(redisKeys.nameIds)).sort(), ["kept", "next"]);
      assert.deepEqual((await redis.zrange(redisKeys.names, 0, -1)).sort(), ["kept", "next"]);
      // The name is free again, and the new token is the one listed under it.
      const again = sibling(kept, "brief");
      assert.deepEqual(await store.create(again), { kind: "created" });
      assert.equal(
        (await listAll(store, kept.userId)).find((t) => t.name === "brief")?.id,
        again.tokenId,
      );
    });

    it("deleting a token whose name now belongs to another id leaves that name alone", async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const old = await newToken(redis, "shared");
      const redisKeys = redisKeysOf(old.userId);
      await store.create(old);
      // As when the name expired and was taken again while the old key still lived.
      await redis.hset(redisKeys.nameIds, "shared", "AAAAAAAAAAAAAAAA");
      assert.deepEqual(await store.delete({ ...old, messageDigest: randomBytes(32) }), {
        kind: "deleted",
      });
      assert.deepEqual(await redis.zrange(redisKeys.names, 0, -1), ["shared"]);
      assert.deepEqual(await redis.hgetall(redisKeys.nameIds), { shared: "AAAAAAAAAAAAAAAA" });
    });
  });
});

// A bearer check's read: the record and its expiry in one script on the user's slot.
describe("token store lookup", () => {
  const { redis } = redisServerSuite();

  for (const name of ["bot ü", undefined]) {
    it(`a ${name === undefined ? "session" : "named"} token: digest, name and exact expiry in one GET`, async () => {
      const operations: string[] = [];
      const runRedis = createRedisRunner({ observe: (operation) => operations.push(operation) });
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis }, runRedis });
      const token = await newToken(redis, name);
      assert.deepEqual(await store.create(token), { kind: "created" });
      operations.length = 0;
      const stored = await store.lookup(token.userId, token.tokenId);
      assert.ok(stored !== undefined);
      assert.deepEqual(stored.digest, token.tokenDigest);
      assert.equal(stored.name, name ?? "");
      assert.equal(stored.expiresAtMs, token.expiresAtMs);
      assert.equal(
        stored.expiresAtMs,
        await redis.pexpiretime(redisKeysOf(token.userId).token(token.tokenId)),
      );
      assert.deepEqual(operations, ["token.lookup"]);

      await store.delete({ ...token, messageDigest: randomBytes(32) });
      assert.equal(await store.lookup(token.userId, token.tokenId), undefined);
    });
  }

  it("an unknown id or another user's id finds nothing; a UUID's case does not matter", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const token = await newToken(redis, "mine");
    assert.deepEqual(await store.create(token), { kind: "created" });
    assert.equal(await store.lookup(token.userId, tokenIdOf(randomBytes(32))), undefined);
    assert.equal(await store.lookup(randomUUID(), token.tokenId), undefined);
    const upper = await store.lookup(token.userId.toUpperCase(), token.tokenId);
    assert.deepEqual(upper?.digest, token.tokenDigest);
  });

  it("is one command on the server", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const token = await newToken(redis, undefined);
    assert.deepEqual(await store.create(token), { kind: "created" });
    await store.lookup(token.userId, token.tokenId);
    await redis.config("RESETSTAT");
    await store.lookup(token.userId, token.tokenId);
    await store.lookup(token.userId, tokenIdOf(randomBytes(32)));
    const stats = await redis.info("commandstats");
    const calls = [...stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].map(
      ([, command, n]) => `${command}=${n}`,
    );
    // The record says when it expires: one GET each, no script.
    assert.deepEqual(calls.sort(), ["get=2"]);
  });

  /** Writes a token as stores before record layout 1 did: its digest, then its name. */
  async function createLayout0(name: string | undefined): Promise<NewToken> {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const token = await newToken(redis, name);
    assert.deepEqual(await store.create(token), { kind: "created" });
    const key = redisKeysOf(token.userId).token(token.tokenId);
    await redis.set(key, Buffer.concat([token.tokenDigest, Buffer.from(name ?? "")]), "KEEPTTL");
    return token;
  }

  for (const name of ["bot ü", undefined]) {
    it(`a ${name === undefined ? "session" : "named"} token of record layout 0: its expiry read from its key, then deleted`, async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const token = await createLayout0(name);
      const stored = await store.lookup(token.userId, token.tokenId);
      // A record of an older layout reads as read and trade, from anywhere (issue 42).
      assert.deepEqual(stored, {
        digest: token.tokenDigest,
        name: name ?? "",
        expiresAtMs: token.expiresAtMs,
        grants: DEFAULT_GRANTS,
      });
      const redisKeys = redisKeysOf(token.userId);
      assert.deepEqual(await store.delete({ ...token, messageDigest: randomBytes(32) }), {
        kind: "deleted",
      });
      await assertNoKeys(redis, redisKeys.token(token.tokenId), redisKeys.names, redisKeys.nameIds);
      assert.equal(await store.lookup(token.userId, token.tokenId), undefined);
    });
  }

  /**
   * Rewrites a created token's record as `record(token)` (expiry kept), as an
   * older or newer release would have written it.
   */
  async function rewritten(name: string, record: (token: NewToken) => Buffer): Promise<NewToken> {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const token = await newToken(redis, name);
    assert.deepEqual(await store.create(token), { kind: "created" });
    const key = redisKeysOf(token.userId).token(token.tokenId);
    await redis.set(key, record(token), "KEEPTTL");
    return token;
  }

  // Each is read, listed and deleted (its name freed) by this release: a
  // record layout is never dropped while its tokens may live, and a field
  // this release does not know (a newer release's, during a rolling upgrade)
  // is skipped by every reader, the scripts included.
  for (const [layout, record] of [
    [
      "layout 1 (digest, 0x01, expiry, name)",
      (token: NewToken) => {
        const expiry = Buffer.alloc(8);
        expiry.writeBigUInt64BE(BigInt(token.expiresAtMs));
        return Buffer.concat([
          token.tokenDigest,
          Buffer.of(0x01),
          expiry,
          Buffer.from(token.name ?? ""),
        ]);
      },
    ],
    [
      "layout 2 with fields this release does not know, before and after the name",
      (token: NewToken) => {
        const known = encodeTokenRecord({
          digest: token.tokenDigest,
          name: token.name ?? "",
          expiresAtMs: token.expiresAtMs,
          extras: {},
        });
        const unknown = (field: number) =>
          new BinaryWriter()
            .tag(field, WireType.LengthDelimited)
            .string("from a newer release")
            .tag(field + 1, WireType.Varint)
            .uint64(300n)
            .tag(field + 2, WireType.Bit64)
            .fixed64(1n)
            .tag(field + 3, WireType.Bit32)
            .fixed32(1)
            .finish();
        return Buffer.concat([
          known.subarray(0, TOKEN_RECORD_LAYOUT.headBytes),
          unknown(1000),
          known.subarray(TOKEN_RECORD_LAYOUT.headBytes),
          unknown(2000),
        ]);
      },
    ],
  ] as const) {
    it(`a named token of record ${layout}: read, listed, deleted with its name`, async () => {
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
      const token = await rewritten("bot ü", record);
      // A record of an older layout reads as read and trade, from anywhere (issue 42).
      assert.deepEqual(await store.lookup(token.userId, token.tokenId), {
        digest: token.tokenDigest,
        name: "bot ü",
        expiresAtMs: token.expiresAtMs,
        grants: DEFAULT_GRANTS,
      });
      assert.deepEqual(
        (await listAll(store, token.userId)).map(({ id, name, expiresAtMs }) => ({
          id,
          name,
          expiresAtMs,
        })),
        [{ id: token.tokenId, name: "bot ü", expiresAtMs: token.expiresAtMs }],
      );
      assert.deepEqual(await store.delete({ ...token, messageDigest: randomBytes(32) }), {
        kind: "deleted",
      });
      await assertTokenGone(redis, token);
    });
  }

  it("a name left behind by a delete that read a record's name wrongly is free again", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const token = await newToken(redis, "left behind");
    assert.deepEqual(await store.create(token), { kind: "created" });
    // What an instance of the layout 0 scripts does with a layout 1 record: the key goes, the
    // name it reads ("\x01" + expiry + name) is no name of the user's, so the real one stays.
    await redis.del(redisKeysOf(token.userId).token(token.tokenId));
    const again = await newToken(redis, "left behind");
    assert.deepEqual(await store.create({ ...again, userId: token.userId }), {
      kind: "created",
    });
    // A name whose token lives is still taken.
    const third = await newToken(redis, "left behind");
    assert.deepEqual(await store.create({ ...third, userId: token.userId }), {
      kind: "name-taken",
    });
  });

  it("Redis stopped: a StoreError of kind unavailable", async () => {
    const own = await startTestRedisServer();
    const client = createRedisClient({ topology: own.topology });
    try {
      await waitForRedisReady(client, 5000);
      const store = createTokenStore({ ...STORE_SETTINGS, redis: { client } });
      await own.stop();
      await assert.rejects(
        store.lookup(randomUUID(), tokenIdOf(randomBytes(32))),
        (err) => err instanceof StoreError && err.kind === "unavailable",
      );
    } finally {
      client.disconnect();
      await own.dispose();
    }
  });
});
