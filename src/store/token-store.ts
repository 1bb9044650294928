import type { Result } from "ioredis";
import { SETTING_DEFAULTS } from "../config/setting-defaults.js";
import type { RedisHolder } from "../redis/redis-holder.js";
import { createDurableWriter } from "./durable-writer.js";
import { LEGACY_LIVE_MEMBER_BYTES, LIVE_MEMBER_BYTES, liveMemberOf, redisKeysOf } from "./keys.js";
import type { ScriptArg } from "./lua-script.js";
import { createRedisCall, type RedisCall } from "./redis-call.js";
import { scriptedClient } from "./scripted-client.js";
import { StoreError } from "./store-error.js";
import {
  decodeTokenRecord,
  encodeTokenRecord,
  type TokenRecordExtras,
  tokenRecordExtras,
} from "./token-record.js";
import type { TokenRecordCache, TrackedRead } from "./token-record-cache.js";
import { TokenScriptStatus as Status } from "./token-script-status.js";
import {
  CREATE_TOKEN,
  DELETE_TOKEN,
  LIST_NAMED_TOKENS,
  LOOKUP_TOKEN,
  REVOKE_USER_TOKENS,
  ROLLBACK_CREATE,
  TOKEN_SCRIPTS,
} from "./token-scripts.js";

type ScriptReply = [status: Status, retryAfterMs: number];

declare module "ioredis" {
  interface RedisCommander<Context> {
    perpsCreateToken(...keysAndArgs: ScriptArg[]): Result<ScriptReply, Context>;
    perpsDeleteToken(...keysAndArgs: ScriptArg[]): Result<ScriptReply, Context>;
    perpsRollbackCreate(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    perpsListNamedTokensBuffer(
      ...keysAndArgs: ScriptArg[]
    ): Result<[Status, number, ...(Buffer | number)[]], Context>;
    perpsRevokeUserTokens(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    perpsLookupTokenBuffer(
      ...keysAndArgs: ScriptArg[]
    ): Result<[record: Buffer, expiresAtMs: number] | null, Context>;
  }
}

/** What every signed call carries to the store. */
export interface SignedCall {
  /** Lowercase user id. */
  userId: string;
  /** The public key whose signature was verified; it must still be registered. */
  signerPublicKey: string;
  /** SHA-256 of the signed message (32 raw bytes), remembered to refuse replays, whatever the outcome. */
  messageDigest: Buffer;
}

/**
 * A token to store. Besides the name and the expiry, it may carry any field
 * of the stored record (TokenRecord, token-record.ts); each one left out is
 * stored as its default.
 */
export interface NewToken extends SignedCall, Partial<TokenRecordExtras> {
  /** `tokenIdOf(messageDigest)`: a replay of the message finds the token by it. */
  tokenId: string;
  /** `tokenDigest()` of the bearer token; the token itself is never stored. */
  tokenDigest: Buffer;
  /** Undefined for a session token. */
  name: string | undefined;
  expiresAtMs: number;
}

/** Refusals shared by create and delete. */
export type CallRefusal =
  | { kind: "key-revoked" }
  | { kind: "replayed" }
  | { kind: "rate-limited"; retryAfterMs: number };

export type CreateTokenOutcome =
  | { kind: "created" }
  /** This very message created `tokenId` earlier, and that token is live. */
  | { kind: "already-created" }
  | { kind: "name-taken" }
  | { kind: "too-many-tokens"; retryAfterMs: number }
  | CallRefusal;

/** A live named token, as listed: its id, name, expiry and every other stored field. */
export interface NamedTokenSummary extends TokenRecordExtras {
  id: string;
  name: string;
  expiresAtMs: number;
}

/** A place in the listing's order (expiry, then name in byte order): a page resumes after it. */
export interface ListPosition {
  expiresAtMs: number;
  name: string;
}

/** What a page of the listing asks for. */
export interface ListPageRequest {
  /** Most tokens in the page (at least 1). */
  size: number;
  /** Undefined for the first page. */
  after: ListPosition | undefined;
}

export type ListNamedOutcome =
  | {
      kind: "page";
      tokens: NamedTokenSummary[];
      /** Where the next page resumes; undefined when this page is the last. */
      next: ListPosition | undefined;
    }
  | { kind: "rate-limited"; retryAfterMs: number };

/** A token's record as stored, for a bearer check. */
export interface StoredToken {
  /** `tokenDigest()` of the token: the stored {@link TOKEN_DIGEST_BYTES} raw bytes. */
  digest: Buffer;
  /** "" for a session token. */
  name: string;
  /** When Redis expires the record, in Unix ms. */
  expiresAtMs: number;
  /** With a cache: keeps the record in memory; call only once the presented token matched it. */
  keep?: () => void;
}

export type DeleteTokenOutcome = { kind: "deleted" } | { kind: "not-found" } | CallRefusal;

/** Every method throws {@link StoreError} when Redis cannot do what it asks. */
export interface TokenStore {
  /** Most live tokens one user may have. */
  readonly maxActivePerUser: number;
  /** The public keys registered for a user (lowercase id). */
  publicKeys(userId: string): Promise<string[]>;
  /** Stores a token: one round trip, atomic with every check. */
  create(token: NewToken): Promise<CreateTokenOutcome>;
  /** Deletes a live token of the user: one round trip, atomic with every check. */
  delete(call: SignedCall & { tokenId: string }): Promise<DeleteTokenOutcome>;
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
}

export interface TokenStoreOptions {
  redis: RedisHolder;
  /**
   * Connections for writes that wait for replicas, one write each at a time
   * (durable-writer.ts). Default: `redis`.
   */
  waitLanes?: readonly RedisHolder[];
  /** How each Redis operation is run (timed, failures made StoreErrors). Default: without metrics. */
  call?: RedisCall;
  /** Replicas that must confirm each write before it is acknowledged. Default 0. */
  minReplicasAck?: number;
  /** How long to wait for those confirmations. Default: the durable writer's. */
  waitTimeoutMs?: number;
  /** Most live tokens per user, session tokens included. Default: the config's. */
  maxActivePerUser?: number;
  /** Create and delete calls per user per minute (token bucket, bursts up to it). Default: the config's. */
  rateLimitPerMinute?: number;
  /** List calls per user per minute (a token bucket of its own, bursts up to it). Default: the config's. */
  listRateLimitPerMinute?: number;
  /**
   * How long a signed message is remembered once its signature verified
   * (whatever the outcome). Default 300000 ms: the whole ±2-minute window
   * (240 s) plus a minute for clock skew.
   */
  replayWindowMs?: number;
  /** Token records kept in memory, dropped on Redis' invalidations. Default none: every lookup reads Redis. */
  cache?: TokenRecordCache;
}

function refusal(status: Status, retryAfterMs: number): CallRefusal {
  switch (status) {
    case Status.KEY_REVOKED:
      return { kind: "key-revoked" };
    case Status.REPLAYED:
      return { kind: "replayed" };
    case Status.RATE_LIMITED:
      return { kind: "rate-limited", retryAfterMs };
    default:
      throw new Error(`unexpected token script status ${status}`);
  }
}

/** Runs a write, then `forget` whatever came of it: a cached record never outlives its delete's answer. */
async function forgettingAfter<T>(forget: () => void, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } finally {
    forget();
  }
}

/**
 * Tokens in Redis: one string per token expiring with it, a per-user name
 * index (names by expiry, and name → id for listing), a count of live tokens,
 * remembered messages and a rate bucket, all in the user's slot.
 */
export function createTokenStore(opts: TokenStoreOptions): TokenStore {
  const { cache } = opts;
  const redis = scriptedClient(opts.redis, TOKEN_SCRIPTS);
  const redisCall = opts.call ?? createRedisCall();
  const maxActivePerUser = opts.maxActivePerUser ?? SETTING_DEFAULTS.tokenMaxActivePerUser;
  const maxActive = String(maxActivePerUser);
  const rateCapacity = String(opts.rateLimitPerMinute ?? SETTING_DEFAULTS.tokenRateLimitPerMinute);
  const ratePeriodMs = "60000";
  const listRateCapacity = String(
    opts.listRateLimitPerMinute ?? SETTING_DEFAULTS.tokenListRateLimitPerMinute,
  );
  const replayWindowMs = String(opts.replayWindowMs ?? 300_000);
  const writer = createDurableWriter({
    redis,
    ...(opts.waitLanes === undefined
      ? {}
      : { lanes: opts.waitLanes.map((lane) => scriptedClient(lane, TOKEN_SCRIPTS)) }),
    ...(opts.minReplicasAck === undefined ? {} : { minReplicasAck: opts.minReplicasAck }),
    ...(opts.waitTimeoutMs === undefined ? {} : { waitTimeoutMs: opts.waitTimeoutMs }),
  });

  const signedCallKeys = (userId: string, tokenId: string) => {
    const redisKeys = redisKeysOf(userId);
    return {
      publicKeys: redisKeys.publicKeys,
      token: redisKeys.token(tokenId),
      names: redisKeys.names,
      live: redisKeys.live,
      replay: redisKeys.replay,
      rate: redisKeys.rate,
      nameIds: redisKeys.nameIds,
    };
  };
  const signedCallArgs = (call: SignedCall) => ({
    signerPublicKey: call.signerPublicKey,
    messageDigest: call.messageDigest,
    replayWindowMs,
    rateCapacity,
    ratePeriodMs,
  });

  return {
    maxActivePerUser,
    publicKeys: (userId) =>
      redisCall("keys.read", () => redis().smembers(redisKeysOf(userId).publicKeys), "read"),

    async create(token) {
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
      const liveMember = liveMemberOf(token.tokenId);
      const args = CREATE_TOKEN.call(signedCallKeys(token.userId, token.tokenId), {
        ...signedCallArgs(token),
        record: encodeTokenRecord({ digest, name: name ?? "", expiresAtMs, extras }),
        liveMember,
        named: token.name === undefined ? "0" : "1",
        name: token.name ?? "",
        expiresAtMs: String(token.expiresAtMs),
        maxActive,
        tokenId: token.tokenId,
      });
      const redisKeys = redisKeysOf(token.userId);
      const rollbackArgs = ROLLBACK_CREATE.call(
        {
          token: redisKeys.token(token.tokenId),
          names: redisKeys.names,
          live: redisKeys.live,
          replay: redisKeys.replay,
          nameIds: redisKeys.nameIds,
        },
        {
          name: token.name ?? "",
          liveMember,
          messageDigest: token.messageDigest,
          tokenId: token.tokenId,
        },
      );
      // Nobody receives the value of a token whose create was not confirmed or
      // whose reply was lost: it is rolled back (on the same connection, so after
      // the create should that still run), and a retry finds its name free.
      const { reply, confirmed } = await redisCall("token.create", () =>
        writer.write(
          (client) => client.perpsCreateToken(...args),
          (pipeline) => pipeline.perpsCreateToken(...args),
          {
            needed: ([status]) => status === Status.DONE,
            run: (client) => client.perpsRollbackCreate(...rollbackArgs),
          },
        ),
      );
      const [status, retryAfterMs] = reply;
      if (status === Status.DONE && !confirmed) {
        throw new StoreError("unconfirmed-write");
      }
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
    },

    async delete(call) {
      const args = DELETE_TOKEN.call(signedCallKeys(call.userId, call.tokenId), {
        ...signedCallArgs(call),
        liveMember: liveMemberOf(call.tokenId),
        tokenId: call.tokenId,
        legacyLiveMemberBytes: String(LEGACY_LIVE_MEMBER_BYTES),
      });
      const { reply, confirmed } = await forgettingAfter(
        () => cache?.forget(redisKeysOf(call.userId).token(call.tokenId)),
        () =>
          redisCall("token.delete", () =>
            writer.write(
              (client) => client.perpsDeleteToken(...args),
              (pipeline) => pipeline.perpsDeleteToken(...args),
            ),
          ),
      );
      const [status, retryAfterMs] = reply;
      if (status === Status.DONE && !confirmed) {
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
    },

    async listNamed(userId, page) {
      const redisKeys = redisKeysOf(userId);
      const args = LIST_NAMED_TOKENS.call(
        { names: redisKeys.names, nameIds: redisKeys.nameIds, listRate: redisKeys.listRate },
        {
          tokenPrefix: redisKeys.tokenPrefix,
          rateCapacity: listRateCapacity,
          ratePeriodMs,
          pageSize: String(page.size),
          afterExpiresAtMs: page.after === undefined ? "" : String(page.after.expiresAtMs),
          afterName: page.after?.name ?? "",
        },
      );
      const [status, retryAfterMs, more, lastExpiresAtMs, lastName, ...flat] = await redisCall(
        "token.list",
        () => redis().perpsListNamedTokensBuffer(...args),
        "read",
      );
      if (status === Status.RATE_LIMITED) {
        return { kind: "rate-limited", retryAfterMs };
      }
      const tokens: NamedTokenSummary[] = [];
      for (let i = 0; i + 3 < flat.length; i += 4) {
        const record = flat[i + 3];
        tokens.push({
          // The name and expiry the index orders by; the other fields from the record.
          ...(Buffer.isBuffer(record) ? tokenRecordExtras(record) : tokenRecordExtras(Buffer.of())),
          name: String(flat[i]),
          id: String(flat[i + 1]),
          expiresAtMs: Number(String(flat[i + 2])),
        });
      }
      const next =
        more === 1
          ? { expiresAtMs: Number(String(lastExpiresAtMs)), name: String(lastName) }
          : undefined;
      return { kind: "page", tokens, next };
    },

    async revokeAll(userId) {
      const redisKeys = redisKeysOf(userId);
      const args = REVOKE_USER_TOKENS.call(
        { names: redisKeys.names, nameIds: redisKeys.nameIds, live: redisKeys.live },
        { tokenPrefix: redisKeys.tokenPrefix, idBytes: String(LIVE_MEMBER_BYTES) },
      );
      const { reply, confirmed } = await forgettingAfter(
        () => cache?.forgetPrefix(redisKeys.tokenPrefix),
        () =>
          redisCall("token.revoke-all", () =>
            writer.write(
              (client) => client.perpsRevokeUserTokens(...args),
              (pipeline) => pipeline.perpsRevokeUserTokens(...args),
            ),
          ),
      );
      if (!confirmed) {
        throw new StoreError("unconfirmed-write");
      }
      return reply;
    },

    async lookup(userId, tokenId) {
      const key = redisKeysOf(userId).token(tokenId);
      const cached = cache?.get(key);
      if (cached !== undefined) {
        return cached;
      }
      // One GET on the user's primary (reads never go to a lagging replica,
      // which may still hold a deleted token); with a cache, on its tracking
      // connection when it can.
      const read = await redisCall(
        "token.lookup",
        (): Promise<{ value: Buffer | null; keep?: TrackedRead["keep"] }> =>
          cache === undefined
            ? redis()
                .getBuffer(key)
                .then((value) => ({ value }))
            : cache.read(key, () => redis().getBuffer(key)),
        "read",
      );
      const record = read.value === null ? undefined : decodeTokenRecord(read.value);
      if (record === undefined) {
        return undefined;
      }
      const { expiresAtMs } = record;
      if (expiresAtMs !== undefined) {
        const found: StoredToken = { digest: record.digest, name: record.name, expiresAtMs };
        const keep = read.keep;
        if (keep !== undefined) {
          found.keep = () => keep({ digest: record.digest, name: record.name, expiresAtMs });
        }
        return found;
      }
      // A record of layout 0 does not say when it expires: its key does.
      const reply = await redisCall(
        "token.lookup",
        () => redis().perpsLookupTokenBuffer(...LOOKUP_TOKEN.call({ token: key }, {})),
        "read",
      );
      return reply === null
        ? undefined
        : { digest: record.digest, name: record.name, expiresAtMs: reply[1] };
    },
  };
}
