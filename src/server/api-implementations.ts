// The contract's services over their stores: what the app serves, with the
// audit lines of operators' actions that the admin services write.
//
// Tested by test/integration/token-service.test.ts, test/integration/incident-tools.test.ts, test/integration/token-introspection.test.ts, test/integration/operability.test.ts.

import { callerKey, operatorKey } from "../admin-auth/call-gate.js";
import { createEd25519Verifier } from "../crypto/ed25519-verifier.js";
import type { AuditLog } from "../log/audit-event.js";
import type { Logger } from "../log/logger.js";
import {
  createTokenCacheMetrics,
  type ServiceMetrics,
  type TokenCacheMetrics,
} from "../metrics/service-metrics.js";
import type { RedisHolder } from "../redis/redis-holder.js";
import type { CacheGraceObserver } from "../store/cache-grace.js";
import type { DurableWriterOptions } from "../store/durable-writer.js";
import { createLastUseRecorder, type LastUseRecorder } from "../store/last-use-recorder.js";
import { createPublicKeyStore } from "../store/public-key-store.js";
import type { RedisRunner } from "../store/redis-runner.js";
import {
  createTokenRecordCache,
  type TokenRecordCache,
  type TokenRecordCacheObserver,
} from "../store/token-record-cache.js";
import { createTokenStore, type TokenStoreOptions } from "../store/token-store.js";
import {
  type BearerAuthenticator,
  createBearerAuthenticator,
} from "../token/bearer-authenticator.js";
import { createTokenAdminService } from "../token/token-admin-service.js";
import { createTokenIntrospectionService } from "../token/token-introspection-service.js";
import { createTokenService } from "../token/token-service.js";
import { createUserKeyService } from "../user-key/user-key-service.js";
import type { ApiImplementations } from "./api-services.js";
import { exchangeKey } from "./exchange.js";
import { requestIdKey } from "./request-id.js";

/** The token store's per-user limits, as it declares them. */
export type TokenLimits = Pick<
  TokenStoreOptions,
  "maxActivePerUser" | "rateLimitPerMinute" | "listRateLimitPerMinute"
>;

/** How each write waits for replicas (Redis WAIT), as the durable writer declares it. */
export type WriteDurability = Pick<
  DurableWriterOptions,
  "minReplicasAck" | "revocationReplicasAck" | "waitTimeoutMs"
>;

/** The token rules and write durability the services keep (part of the app's options). */
export interface ApiSettings {
  /** Longest token lifetime in seconds. */
  tokenMaxLifetimeSeconds: number;
  tokenLimits: TokenLimits;
  durability: WriteDurability;
  /**
   * Most token records kept in memory for bearer checks (kept exact by
   * Redis' invalidations); 0 turns the cache off.
   */
  tokenCacheMaxEntries: number;
  /** How often each worker writes the last uses it noted (ListTokens' lastUsedAt), in ms. */
  lastUseFlushMs: number;
  /**
   * While Redis fails to answer, how long after the cache lost it its
   * records may still answer checks (TOKEN_CACHE_GRACE_MS); 0: never.
   */
  tokenCacheGraceMs: number;
  /** Server time in Unix milliseconds. Default `Date.now`. */
  now?: () => number;
}

export interface ApiImplementationOptions extends ApiSettings {
  redis: RedisHolder;
  /** Connections for writes that wait for replicas (redis-connections.ts). Default: `redis`. */
  redisWaitLanes?: readonly RedisHolder[];
  /** Every Redis operation goes through it (metrics, traces). */
  runRedis: RedisRunner;
  metrics: ServiceMetrics;
  /** Where the admin services' audit lines go. */
  logger: Logger;
}

/**
 * The cache's metrics, and a line for each whole-cache drop: after an
 * incident (a failover, a lost connection) the log tells when the checks
 * went back to reading Redis. `info`: the drop is the cache doing its job,
 * and a Redis event behind it has a `warn` line of its own.
 */
function loggedDrops(metrics: TokenCacheMetrics, logger: Logger): TokenRecordCacheObserver {
  return {
    ...metrics,
    dropped(reason, entries) {
      metrics.dropped(reason);
      logger.info({ reason, entries }, "token cache dropped");
    },
  };
}

/**
 * The grace's two warn lines, one as it starts and one as it ends with the
 * answers it served, and its counter: answering from records Redis may
 * since have changed is said out loud (docs/security.md).
 */
function loggedGrace(metrics: TokenCacheMetrics, logger: Logger): CacheGraceObserver {
  return {
    started(held, sinceLossMs) {
      logger.warn(
        { held, sinceLossMs: Math.round(sinceLossMs) },
        "Redis cannot answer: serving checks from cache",
      );
    },
    served: metrics.graceServed,
    ended(reason, served) {
      logger.warn({ reason, served }, "serving checks from cache ended");
    },
  };
}

/**
 * The audit lines of operators' actions: one line `"msg":"audit"` per
 * action, with the operator who asked, the peer address of the connection
 * and the request id of the call, so that it sits next to the call's own
 * request line. Written at info level by a logger of its own level, so
 * that LOG_LEVEL (warn, error, silent) never drops one.
 */
export function createAuditLog(logger: Logger): AuditLog {
  const audit = logger.child({}, { level: "info" });
  return (event, context) => {
    audit.info(
      {
        ...event,
        operator: context.values.get(operatorKey),
        peer: context.values.get(callerKey).address,
        requestId: context.values.get(requestIdKey),
      },
      "audit",
    );
  };
}

/**
 * The contract's services over their stores, and the bearer check that
 * IntrospectToken and forward-auth share.
 */
export function createApiImplementations(opts: ApiImplementationOptions): {
  impl: ApiImplementations;
  bearer: BearerAuthenticator;
  /** The token records kept in memory, when the cache is on. */
  tokenCache: TokenRecordCache | undefined;
  /** Where uses are recorded: the check lane notes its answers there too. */
  lastUse: LastUseRecorder;
  /** Closes what the implementations hold open (the token cache's connections), writing the last uses noted. */
  close(): Promise<void>;
} {
  const { redis, runRedis, metrics } = opts;
  const now = opts.now === undefined ? {} : { now: opts.now };
  const durability = {
    ...opts.durability,
    ...(opts.redisWaitLanes === undefined ? {} : { waitLanes: opts.redisWaitLanes }),
  };
  const maxEntries = opts.tokenCacheMaxEntries;
  const cacheMetrics = maxEntries > 0 ? createTokenCacheMetrics(metrics.registry) : undefined;
  const tokenCache =
    cacheMetrics !== undefined
      ? createTokenRecordCache({
          redis,
          maxEntries,
          observer: loggedDrops(cacheMetrics, opts.logger),
          graceMs: opts.tokenCacheGraceMs,
          graceObserver: loggedGrace(cacheMetrics, opts.logger),
        })
      : undefined;
  const cache = tokenCache === undefined ? {} : { cache: tokenCache };
  const tokenStore = createTokenStore({
    redis,
    runRedis,
    ...cache,
    ...durability,
    ...opts.tokenLimits,
  });
  const lastUse = createLastUseRecorder({
    touch: tokenStore.touch,
    flushIntervalMs: opts.lastUseFlushMs,
    failed: (err, writes) => opts.logger.warn({ err, writes }, "last uses of tokens not recorded"),
    now: opts.now ?? Date.now,
  });
  const bearer = createBearerAuthenticator({ store: tokenStore, lastUse, ...now });
  const introspected = {
    active: metrics.introspections.labels({ outcome: "active" }),
    inactive: metrics.introspections.labels({ outcome: "inactive" }),
  };
  const audit = createAuditLog(opts.logger);
  return {
    bearer,
    tokenCache,
    lastUse,
    close: async () => {
      await lastUse.close();
      tokenCache?.close();
    },
    impl: {
      token: createTokenService({
        store: tokenStore,
        // ListTokens' bearer check is the one every check uses: its uses are recorded too.
        authenticator: bearer,
        verifier: createEd25519Verifier(),
        maxLifetimeSeconds: opts.tokenMaxLifetimeSeconds,
        observe: (event) =>
          (event === "created" ? metrics.tokensCreated : metrics.tokensDeleted).inc(),
        ...now,
      }),
      userKey: createUserKeyService({
        store: createPublicKeyStore({
          redis,
          runRedis,
          ...durability,
          ...(tokenCache === undefined ? {} : { tokenCache }),
        }),
        audit,
      }),
      tokenAdmin: createTokenAdminService({ store: tokenStore, audit }),
      introspection: createTokenIntrospectionService({
        authenticator: bearer,
        refused: (reason) => metrics.grantRefusals.inc({ reason, method: "IntrospectToken" }),
        observe: (active, context) => {
          (active ? introspected.active : introspected.inactive).inc();
          // The answer is a check's: counted, not logged (exchange-report.ts).
          const exchange = context.values.get(exchangeKey);
          if (exchange !== undefined) {
            exchange.live = active;
          }
        },
      }),
    },
  };
}
