/**
 * Tokens in Redis: one string per token expiring with it, a per-user name
 * index (names by expiry, and name → id for listing), a count of live tokens,
 * remembered messages and a rate bucket, all in the user's slot. This file
 * assembles the store, then holds its operations in the order of its
 * methods: create (lua/create-token.lua, and lua/rollback-create.lua to
 * undo an unconfirmed one), delete (lua/delete-token.lua), lookup, the
 * bearer check (a GET, or lua/lookup-token.lua for a record that does not
 * hold its expiry), and revokeAll (lua/revoke-user-tokens.lua). The
 * listing has a file of its own, list-named-tokens.ts.
 *
 * Tested by test/integration/token-store.test.ts, test/integration/token-store-list-pages.test.ts, test/integration/create-rollback.test.ts, test/integration/replica-wait.test.ts, test/integration/create-retries.test.ts, test/integration/create-retries-failover.test.ts, test/integration/token-cache.test.ts, test/integration/incident-tools.test.ts, test/unit/token/bearer-authenticator.test.ts.
 */

import type { RedisClient } from "../redis/redis-client.js";
import type { RedisHolder } from "../redis/redis-holder.js";
import { createDurableWriter, type DurableWriter } from "./durable-writer.js";
import {
  LEGACY_LIVE_MEMBER_BYTES,
  LIVE_MEMBER_BYTES,
  lastUseKeyOf,
  liveMemberOf,
  redisKeysOf,
} from "./keys.js";
import {
  createNamedTokenLister,
  type ListNamedOutcome,
  type ListPageRequest,
} from "./list-named-tokens.js";
import { type ScriptArg, scriptedClient } from "./lua-script.js";
import { createRedisRunner, type RedisRunner } from "./redis-runner.js";
import {
  type RequestRefusal,
  refusal,
  type SignedRequest,
  type SignedRequestLimits,
  signedRequestArgs,
  signedRequestKeys,
} from "./signed-request.js";
import { StoreError } from "./store-error.js";
import type { TokenGrants } from "./token-grants.js";
import { decodeTokenRecord, encodeTokenRecord, type TokenRecordExtras } from "./token-record.js";
import type { TokenRecordCache, TrackedRead } from "./token-record-cache.js";
import {
  CREATE_TOKEN,
  DELETE_TOKEN,
  LOOKUP_TOKEN,
  REVOKE_USER_TOKENS,
  ROLLBACK_CREATE,
  TokenScriptStatus as Status,
  TOKEN_SCRIPTS,
  TOUCH_TOKEN,
} from "./token-scripts.js";

/** Every method throws a StoreError (store-error.ts) when Redis cannot do what it asks. */
export interface TokenStore {
  /** Most live tokens one user may have. */
  readonly maxActivePerUser: number;
  /** The public keys registered for a user (lowercase id). */
  publicKeys(userId: string): Promise<string[]>;
  /** Stores a token: one round trip, atomic with every check. */
  create(token: NewToken): Promise<CreateTokenOutcome>;
  /** Deletes a live token of the user: one round trip, atomic with every check. */
  delete(request: SignedRequest & { tokenId: string }): Promise<DeleteTokenOutcome>;
  /**
   * A page of the user's live named tokens (not expired by Redis's clock),
   * ordered by expiry then name, cut in Redis; session tokens are never
   * listed. Each call takes one from the user's list rate. One round trip.
   */
  listNamed(userId: string, page: ListPageRequest): Promise<ListNamedOutcome>;
  /**
   * The record of the token `tokenId` of the user (lowercase id), or
   * undefined when there is none: one round trip to the user's slot.
   */
  lookup(userId: string, tokenId: string): Promise<StoredToken | undefined>;
  /**
   * Deletes every live token of the user, named and session, in one atomic
   * step; resolves with how many there were. One round trip.
   */
  revokeAll(userId: string): Promise<number>;
  /**
   * Records that the token whose key this is was used at `usedAtMs` (its
   * lastUsedAt), while it lives and only forward in time: one round trip.
   */
  touch(tokenKey: string, usedAtMs: number): Promise<void>;
}

export interface TokenStoreOptions {
  redis: RedisHolder;
  /**
   * Connections for writes that wait for replicas, one write each at a time
   * (durable-writer.ts). Default: `redis`.
   */
  waitLanes?: readonly RedisHolder[];
  /** How each Redis operation is run (timed, failures made StoreErrors). Default: without metrics. */
  runRedis?: RedisRunner;
  /** Replicas that must confirm each write before it is acknowledged. Default 0. */
  minReplicasAck?: number;
  /**
   * Replicas that must confirm each revocation (delete, revokeAll), asked at
   * each (revocation-replicas.ts). Default: `minReplicasAck`.
   */
  revocationReplicasAck?: () => number;
  /** How long to wait for those confirmations (REDIS_WAIT_TIMEOUT_MS). */
  waitTimeoutMs: number;
  /** Most live tokens per user, session tokens included (TOKEN_MAX_ACTIVE_PER_USER). */
  maxActivePerUser: number;
  /** Create and delete calls per user per minute (token bucket, bursts up to it; TOKEN_RATE_LIMIT_PER_MINUTE). */
  rateLimitPerMinute: number;
  /** List calls per user per minute (a token bucket of its own, bursts up to it; TOKEN_LIST_RATE_LIMIT_PER_MINUTE). */
  listRateLimitPerMinute: number;
  /**
   * How long a signed message is remembered once its signature verified
   * (whatever the outcome). Default 300000 ms: the whole ±2-minute window
   * (240 s) plus a minute for clock skew.
   */
  replayWindowMs?: number;
  /** Token records kept in memory, dropped on Redis' invalidations. Default none: every lookup reads Redis. */
  cache?: TokenRecordCache;
}

export function createTokenStore(opts: TokenStoreOptions): TokenStore {
  const { cache } = opts;
  const redis = scriptedClient(opts.redis, TOKEN_SCRIPTS);
  const runRedis = opts.runRedis ?? createRedisRunner();
  const { maxActivePerUser } = opts;
  const ratePeriodMs = "60000";
  const limits: SignedRequestLimits = {
    replayWindowMs: String(opts.replayWindowMs ?? 300_000),
    rateCapacity: String(opts.rateLimitPerMinute),
    ratePeriodMs,
  };
  const writer = createDurableWriter({
    redis,
    ...(opts.waitLanes === undefined
      ? {}
      : { lanes: opts.waitLanes.map((lane) => scriptedClient(lane, TOKEN_SCRIPTS)) }),
    ...(opts.minReplicasAck === undefined ? {} : { minReplicasAck: opts.minReplicasAck }),
    ...(opts.revocationReplicasAck === undefined
      ? {}
      : { revocationReplicasAck: opts.revocationReplicasAck }),
    waitTimeoutMs: opts.waitTimeoutMs,
  });

  return {
    maxActivePerUser,
    publicKeys: (userId) =>
      runRedis("keys.read", () => redis().smembers(redisKeysOf(userId).publicKeys), "read"),
    create: createTokenCreator({
      runRedis,
      writer,
      limits,
      maxActive: String(maxActivePerUser),
    }),
    delete: createTokenDeleter({ runRedis, writer, limits, cache }),
    listNamed: createNamedTokenLister({
      redis,
      runRedis,
      rateCapacity: String(opts.listRateLimitPerMinute),
      ratePeriodMs,
    }),
    lookup: createTokenLookup({ redis, runRedis, cache }),
    revokeAll: createUserTokensRevoker({ runRedis, writer, cache }),
    async touch(tokenKey, usedAtMs) {
      const args = TOUCH_TOKEN.argv(
        { token: tokenKey, lastUse: lastUseKeyOf(tokenKey) },
        { usedAtMs: String(usedAtMs) },
      );
      await runRedis("token.touch", () => redis().perpsTouchToken(...args), "write");
    },
  };
}

// Create.

/**
 * A token to store. Besides the name and the expiry, it may carry any field
 * of the stored record (TokenRecord, token-record.ts); each one left out is
 * stored as its default.
 */
export interface NewToken extends SignedRequest, Partial<TokenRecordExtras> {
  /** `tokenIdOf(messageDigest)`: a replay of the message finds the token by it. */
  tokenId: string;
  /** `tokenDigest()` of the bearer token; the token itself is never stored. */
  tokenDigest: Buffer;
  /** Undefined for a session token. */
  name: string | undefined;
  expiresAtMs: number;
}

export type CreateTokenOutcome =
  | { kind: "created" }
  /** This very message created `tokenId` earlier, and that token is live. */
  | { kind: "already-created" }
  | { kind: "name-taken" }
  | { kind: "too-many-tokens"; retryAfterMs: number }
  | RequestRefusal;

/** Stores a token (TokenStore's `create`). */
export type TokenCreator = (token: NewToken) => Promise<CreateTokenOutcome>;

export interface TokenCreatorOptions {
  runRedis: RedisRunner;
  writer: DurableWriter;
  limits: SignedRequestLimits;
  /** Most live tokens per user, session tokens included (decimal text). */
  maxActive: string;
}

/** The record this create stores: this attempt's own, as its bearer token is (its digest). */
function recordOf(token: NewToken): Buffer {
  const {
    userId: _user,
    signerPublicKey: _signer,
    messageDigest: _message,
    tokenId: _id,
    tokenDigest: digest,
    name,
    expiresAtMs,
    ...extras
  } = token;
  return encodeTokenRecord({ digest, name: name ?? "", expiresAtMs, extras });
}

/** The create script's keys and arguments: the signed request, the record and the user's limit. */
function createArgs(
  token: NewToken,
  record: Buffer,
  liveMember: Buffer,
  limits: SignedRequestLimits,
  maxActive: string,
): ScriptArg[] {
  return CREATE_TOKEN.argv(signedRequestKeys(token.userId, token.tokenId), {
    ...signedRequestArgs(token, limits),
    record,
    liveMember,
    named: token.name === undefined ? "0" : "1",
    name: token.name ?? "",
    expiresAtMs: String(token.expiresAtMs),
    maxActive,
    tokenId: token.tokenId,
  });
}

/**
 * The rollback's keys and arguments: what the create wrote, found again by
 * name, and its record, by which the script tells this attempt's writes from
 * those of another attempt of the same signed request (same keys, another
 * bearer token).
 */
function rollbackArgs(token: NewToken, record: Buffer, liveMember: Buffer): ScriptArg[] {
  const redisKeys = redisKeysOf(token.userId);
  return ROLLBACK_CREATE.argv(
    {
      token: redisKeys.token(token.tokenId),
      names: redisKeys.names,
      live: redisKeys.live,
      replay: redisKeys.replay,
      nameIds: redisKeys.nameIds,
    },
    {
      record,
      name: token.name ?? "",
      liveMember,
      messageDigest: token.messageDigest,
      tokenId: token.tokenId,
    },
  );
}

/** What the create script's confirmed answer means. */
function createOutcome(status: Status, retryAfterMs: number): CreateTokenOutcome {
  switch (status) {
    case Status.DONE:
      return { kind: "created" };
    case Status.NAME_TAKEN:
      return { kind: "name-taken" };
    case Status.TOO_MANY_TOKENS:
      return { kind: "too-many-tokens", retryAfterMs };
    case Status.ALREADY_CREATED:
      return { kind: "already-created" };
    default:
      return refusal(status, retryAfterMs);
  }
}

/**
 * Where a token is created: one script (lua/create-token.lua) that checks
 * the signed request and the user's limits and stores the record, atomic with
 * every check, and its rollback (lua/rollback-create.lua) when replicas did
 * not confirm it or its reply was lost, which undoes that attempt's writes
 * and never a retry's.
 */
export function createTokenCreator(opts: TokenCreatorOptions): TokenCreator {
  const { runRedis, writer, limits, maxActive } = opts;
  return async (token) => {
    const liveMember = liveMemberOf(token.tokenId);
    const record = recordOf(token);
    const args = createArgs(token, record, liveMember, limits, maxActive);
    const undoArgs = rollbackArgs(token, record, liveMember);
    // Nobody receives the value of a token whose create was not confirmed or
    // whose reply was lost: it is rolled back (on the same connection, so after
    // the create should that still run), and a retry finds its name free. The
    // rollback may still be retried after this answers, once a retry of the
    // request has stored its own record: it undoes only this attempt's.
    const { reply, confirmed } = await runRedis("token.create", () =>
      writer.write(
        (client) => client.perpsCreateToken(...args),
        (pipeline) => pipeline.perpsCreateToken(...args),
        {
          needed: ([status]) => status === Status.DONE,
          run: (client) => client.perpsRollbackCreate(...undoArgs),
        },
      ),
    );
    const [status, retryAfterMs] = reply;
    if (status === Status.DONE && !confirmed) {
      throw new StoreError("unconfirmed-write");
    }
    return createOutcome(status, retryAfterMs);
  };
}

// Delete.

export type DeleteTokenOutcome = { kind: "deleted" } | { kind: "not-found" } | RequestRefusal;

/** Deletes a live token of the user (TokenStore's `delete`). */
export type TokenDeleter = (
  call: SignedRequest & { tokenId: string },
) => Promise<DeleteTokenOutcome>;

export interface TokenDeleterOptions {
  runRedis: RedisRunner;
  writer: DurableWriter;
  limits: SignedRequestLimits;
  /** The token records kept in memory, if any. */
  cache: TokenRecordCache | undefined;
}

/**
 * Where a token is deleted: one script (lua/delete-token.lua) that checks
 * the signed call and deletes the token, atomic with every check; the
 * token cache forgets the record whatever came of it.
 */
export function createTokenDeleter(opts: TokenDeleterOptions): TokenDeleter {
  const { runRedis, writer, limits, cache } = opts;
  return async (call) => {
    const args = DELETE_TOKEN.argv(signedRequestKeys(call.userId, call.tokenId), {
      ...signedRequestArgs(call, limits),
      liveMember: liveMemberOf(call.tokenId),
      tokenId: call.tokenId,
      legacyLiveMemberBytes: String(LEGACY_LIVE_MEMBER_BYTES),
    });
    const { reply, confirmed } = await forgettingAfter(
      () => cache?.forget(redisKeysOf(call.userId).token(call.tokenId)),
      () =>
        runRedis("token.delete", () =>
          writer.revoke(
            (client) => client.perpsDeleteToken(...args),
            (pipeline) => pipeline.perpsDeleteToken(...args),
          ),
        ),
    );
    const [status, retryAfterMs] = reply;
    // A token not found may be one an earlier delete removed without a
    // replica's confirmation (that delete answered 503, and this is its
    // retry): the script remembered this message, so its WAIT covers that
    // delete too, and only a confirmed absence is answered as one.
    if ((status === Status.DONE || status === Status.NOT_FOUND) && !confirmed) {
      throw new StoreError("unconfirmed-write");
    }
    switch (status) {
      case Status.DONE:
        return { kind: "deleted" };
      case Status.NOT_FOUND:
        return { kind: "not-found" };
      default:
        return refusal(status, retryAfterMs);
    }
  };
}

// Lookup: the bearer check.

/**
 * A lookup's reads at most, when connections drop under it (a Redis that is
 * up): the first, one after the cache's tracking connection closed, one after
 * the client's own reconnect, which the cache waits for (at most 1 s).
 */
const MAX_LOOKUP_READS = 3;

/** A token's record as stored, for a bearer check. */
export interface StoredToken {
  /** `tokenDigest()` of the token: the stored {@link TOKEN_DIGEST_BYTES} raw bytes. */
  digest: Buffer;
  /** "" for a session token. */
  name: string;
  /** When Redis expires the record, in Unix ms. */
  expiresAtMs: number;
  /** Its scopes and allow-list. */
  grants: TokenGrants;
  /** With a cache: keeps the record in memory; call only once the presented token matched it. */
  keep?: () => void;
}

/** The record of the token `tokenId` of the user (TokenStore's `lookup`). */
export type TokenLookup = (userId: string, tokenId: string) => Promise<StoredToken | undefined>;

export interface TokenLookupOptions {
  /** The client with the token scripts defined on it (scriptedClient, lua-script.ts). */
  redis: () => RedisClient;
  runRedis: RedisRunner;
  /** Token records kept in memory, dropped on Redis' invalidations; undefined: every lookup reads Redis. */
  cache: TokenRecordCache | undefined;
}

/**
 * Where a bearer token's record is found (the bearer check, the
 * introspection): from the token cache when it holds the record, else one GET
 * on the user's primary. The hottest path of the service: no allocation,
 * closure or await per call beyond the ones below.
 */
export function createTokenLookup(opts: TokenLookupOptions): TokenLookup {
  const { redis, runRedis, cache } = opts;
  return async (userId, tokenId) => {
    const key = redisKeysOf(userId).token(tokenId);
    const cached = cache?.get(key);
    if (cached !== undefined) {
      return cached;
    }
    // One GET on the user's primary (reads never go to a lagging replica,
    // which may still hold a deleted token); with a cache, on its tracking
    // connection when it can.
    const readRecord = () =>
      runRedis(
        "token.lookup",
        (): Promise<{ value: Buffer | null; keep?: TrackedRead["keep"] }> =>
          cache === undefined
            ? redis()
                .getBuffer(key)
                .then((value) => ({ value }))
            : cache.read(key, () => redis().getBuffer(key)),
        "read",
      );
    let read: { value: Buffer | null; keep?: TrackedRead["keep"] };
    for (let reads = 1; ; reads++) {
      try {
        read = await readRecord();
        break;
      } catch (err) {
        if (cache === undefined) {
          throw err;
        }
        // Redis cannot answer: a record the cache held when it lost Redis may
        // answer, within TOKEN_CACHE_GRACE_MS of that loss (issue 43); a read
        // whose connection only dropped is read again.
        const held = await cache.unanswered(key, err);
        if (held === undefined || (held === "retry" && reads === MAX_LOOKUP_READS)) {
          throw err;
        }
        if (held !== "retry") {
          return held;
        }
      }
    }
    const record = read.value === null ? undefined : decodeTokenRecord(read.value);
    if (record === undefined) {
      return undefined;
    }
    const { expiresAtMs, digest, name, grants } = record;
    if (expiresAtMs !== undefined) {
      const found: StoredToken = { digest, name, expiresAtMs, grants };
      const keep = read.keep;
      if (keep !== undefined) {
        found.keep = () => keep({ digest, name, expiresAtMs, grants });
      }
      return found;
    }
    // A record of layout 0 does not say when it expires: its key does.
    const reply = await runRedis(
      "token.lookup",
      () => redis().perpsLookupTokenBuffer(...LOOKUP_TOKEN.argv({ token: key }, {})),
      "read",
    );
    return reply === null ? undefined : { digest, name, expiresAtMs: reply[1], grants };
  };
}

// Revoke all.

/** Deletes every live token of the user; resolves with how many there were (TokenStore's `revokeAll`). */
export type UserTokensRevoker = (userId: string) => Promise<number>;

export interface UserTokensRevokerOptions {
  runRedis: RedisRunner;
  writer: DurableWriter;
  /** The token records kept in memory, if any. */
  cache: TokenRecordCache | undefined;
}

/**
 * Where every token of a user is revoked at once: one script
 * (lua/revoke-user-tokens.lua) deletes them, named and session, in one
 * atomic step; the token cache forgets the user's records whatever came of it.
 */
export function createUserTokensRevoker(opts: UserTokensRevokerOptions): UserTokensRevoker {
  const { runRedis, writer, cache } = opts;
  return async (userId) => {
    const redisKeys = redisKeysOf(userId);
    const args = REVOKE_USER_TOKENS.argv(
      { names: redisKeys.names, nameIds: redisKeys.nameIds, live: redisKeys.live },
      { tokenPrefix: redisKeys.tokenPrefix, idBytes: String(LIVE_MEMBER_BYTES) },
    );
    const { reply, confirmed } = await forgettingAfter(
      () => cache?.forgetPrefix(redisKeys.tokenPrefix),
      () =>
        runRedis("token.revoke-all", () =>
          writer.revoke(
            (client) => client.perpsRevokeUserTokens(...args),
            (pipeline) => pipeline.perpsRevokeUserTokens(...args),
          ),
        ),
    );
    if (!confirmed) {
      throw new StoreError("unconfirmed-write");
    }
    return reply;
  };
}

// What delete and revokeAll share.

/**
 * Runs a write, then `forget` whatever came of it (answered, refused or
 * failed): a cached record never outlives its delete's answer.
 */
export async function forgettingAfter<T>(forget: () => void, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } finally {
    forget();
  }
}
