/**
 * Tokens in Redis: one string per token expiring with it, a per-user name
 * index (names by expiry, and name → id for listing), a count of live tokens,
 * remembered messages and a rate bucket, all in the user's slot. This file
 * assembles the store; each operation has a file of its own, named like its
 * script: create-token.ts, delete-token.ts, list-named-tokens.ts,
 * lookup-token.ts (the bearer check) and revoke-user-tokens.ts.
 *
 * Tested by test/integration/token-store.test.ts, test/integration/token-store-list-pages.test.ts, test/unit/token/bearer-authenticator.test.ts.
 */

import type { RedisHolder } from "../redis/redis-holder.js";
import { type CreateTokenOutcome, createTokenCreator, type NewToken } from "./create-token.js";
import { createTokenDeleter, type DeleteTokenOutcome } from "./delete-token.js";
import { createDurableWriter } from "./durable-writer.js";
import { redisKeysOf } from "./keys.js";
import {
  createNamedTokenLister,
  type ListNamedOutcome,
  type ListPageRequest,
} from "./list-named-tokens.js";
import { createTokenLookup, type StoredToken } from "./lookup-token.js";
import { createRedisRunner, type RedisRunner } from "./redis-runner.js";
import { createUserTokensRevoker } from "./revoke-user-tokens.js";
import { scriptedClient } from "./scripted-client.js";
import type { SignedRequest, SignedRequestLimits } from "./signed-request.js";
import type { TokenRecordCache } from "./token-record-cache.js";
import { TOKEN_SCRIPTS } from "./token-scripts.js";

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
  };
}
