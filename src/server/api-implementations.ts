import { createEd25519Verifier } from "../crypto/ed25519-verifier.js";
import type { Logger } from "../log/logger.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { createTokenCacheMetrics } from "../metrics/token-cache-metrics.js";
import type { RedisHolder } from "../redis/redis-holder.js";
import { createPublicKeyStore } from "../store/public-key-store.js";
import type { RedisCall } from "../store/redis-call.js";
import { createTokenRecordCache } from "../store/token-record-cache.js";
import { createTokenStore } from "../store/token-store.js";
import {
  type BearerAuthenticator,
  createBearerAuthenticator,
} from "../token/bearer-authenticator.js";
import { createTokenAdminService } from "../token/token-admin-service.js";
import { createTokenIntrospectionService } from "../token/token-introspection-service.js";
import { createTokenService } from "../token/token-service.js";
import { createUserKeyService } from "../user-key/user-key-service.js";
import type { ApiImplementations } from "./api-services.js";
import { createAuditLog } from "./audit-line.js";

/** Token records a process keeps in memory by default: about 30 MB (docs/operating-at-scale.md). */
export const DEFAULT_TOKEN_CACHE_MAX_ENTRIES = 100_000;

/** The token rules and write durability the services keep (part of the app's options). */
export interface ApiSettings {
  /** Longest token lifetime in seconds. */
  tokenMaxLifetimeSeconds: number;
  /** Most live tokens per user. Default 1000. */
  tokenMaxActivePerUser?: number;
  /** Signed create/delete calls per user per minute. Default 60. */
  tokenRateLimitPerMinute?: number;
  /** ListTokens calls per user per minute. Default 120. */
  tokenListRateLimitPerMinute?: number;
  /** Replicas that must confirm each write (Redis WAIT). Default 0. */
  redisMinReplicasAck?: number;
  /** How long to wait for those confirmations. Default 500 ms. */
  redisWaitTimeoutMs?: number;
  /**
   * Most token records kept in memory for bearer checks (kept exact by
   * Redis' invalidations); 0 turns the cache off. Default 100000.
   */
  tokenCacheMaxEntries?: number;
  /** Server time in Unix milliseconds. Default `Date.now`. */
  now?: () => number;
}

export interface ApiImplementationOptions extends ApiSettings {
  redis: RedisHolder;
  /** Connections for writes that wait for replicas (redis-connections.ts). Default: `redis`. */
  redisWaitLanes?: readonly RedisHolder[];
  /** Every Redis operation goes through it (metrics, traces). */
  call: RedisCall;
  metrics: ServiceMetrics;
  /** Where the admin services' audit lines go. */
  logger: Logger;
}

/**
 * The contract's services over their stores, and the bearer check that
 * IntrospectToken and forward-auth share.
 */
export function createApiImplementations(opts: ApiImplementationOptions): {
  impl: ApiImplementations;
  bearer: BearerAuthenticator;
  /** Closes what the implementations hold open (the token cache's connections). */
  close(): void;
} {
  const { redis, call, metrics } = opts;
  const now = opts.now === undefined ? {} : { now: opts.now };
  const durability = {
    ...(opts.redisMinReplicasAck === undefined ? {} : { minReplicasAck: opts.redisMinReplicasAck }),
    ...(opts.redisWaitTimeoutMs === undefined ? {} : { waitTimeoutMs: opts.redisWaitTimeoutMs }),
    ...(opts.redisWaitLanes === undefined ? {} : { waitLanes: opts.redisWaitLanes }),
  };
  const maxEntries = opts.tokenCacheMaxEntries ?? DEFAULT_TOKEN_CACHE_MAX_ENTRIES;
  const tokenCache =
    maxEntries > 0
      ? createTokenRecordCache({
          redis,
          maxEntries,
          observer: createTokenCacheMetrics(metrics.registry),
        })
      : undefined;
  const cache = tokenCache === undefined ? {} : { cache: tokenCache };
  const tokenStore = createTokenStore({
    redis,
    call,
    ...cache,
    ...durability,
    ...(opts.tokenMaxActivePerUser === undefined
      ? {}
      : { maxActivePerUser: opts.tokenMaxActivePerUser }),
    ...(opts.tokenRateLimitPerMinute === undefined
      ? {}
      : { rateLimitPerMinute: opts.tokenRateLimitPerMinute }),
    ...(opts.tokenListRateLimitPerMinute === undefined
      ? {}
      : { listRateLimitPerMinute: opts.tokenListRateLimitPerMinute }),
  });
  const bearer = createBearerAuthenticator({ store: tokenStore, ...now });
  const introspected = {
    active: metrics.introspections.labels({ outcome: "active" }),
    inactive: metrics.introspections.labels({ outcome: "inactive" }),
  };
  const audit = createAuditLog(opts.logger);
  return {
    bearer,
    close: () => tokenCache?.close(),
    impl: {
      token: createTokenService({
        store: tokenStore,
        verifier: createEd25519Verifier(),
        maxLifetimeSeconds: opts.tokenMaxLifetimeSeconds,
        observe: (event) =>
          (event === "created" ? metrics.tokensCreated : metrics.tokensDeleted).inc(),
        ...now,
      }),
      userKey: createUserKeyService({
        store: createPublicKeyStore({
          redis,
          call,
          ...durability,
          ...(tokenCache === undefined ? {} : { tokenCache }),
        }),
        audit,
      }),
      tokenAdmin: createTokenAdminService({ store: tokenStore, audit }),
      introspection: createTokenIntrospectionService({
        authenticator: bearer,
        observe: (active) => (active ? introspected.active : introspected.inactive).inc(),
      }),
    },
  };
}
