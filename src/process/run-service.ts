// One service process put together from its configuration, files and Redis:
// only a running service shows it. Tested by test/integration/start.test.ts,
// test/integration/operator-credentials.test.ts.

import cluster from "node:cluster";
import { loadOperatorCredentials } from "../admin-auth/operator-credentials.js";
import { loadServiceCredentials } from "../admin-auth/service-credentials.js";
import type { CredentialsFileTrouble } from "../admin-auth/watched-credentials-file.js";
import type { Config } from "../config/config.js";
import type { Logger } from "../log/logger.js";
import { redactedUrl } from "../log/redacted-url.js";
import { clusterMetricsSource } from "../metrics/cluster-metrics.js";
import { createPrimaryWatch } from "../redis/primary-watch.js";
import type { RedisClient } from "../redis/redis-client.js";
import { openRedisConnections } from "../redis/redis-connections.js";
import type { RedisTopology } from "../redis/redis-topology.js";
import { createApp } from "../server/app.js";
import { followRevocationReplicas, revocationsMayWait } from "../store/revocation-replicas.js";
import { startOtlpTracing } from "../tracing/otlp-tracing.js";
import type { StartFiles } from "./start-files.js";

export interface RunningService {
  ports: { publicPort: number; internalPort: number };
  /** Stops accepting, finishes calls in flight, closes Redis. */
  stop(): Promise<void>;
  /**
   * Re-reads ADMIN_CREDENTIALS_FILE and SERVICE_CREDENTIALS_FILE now (SIGHUP);
   * a bad file is logged and the entries in use stay; a deleted one leaves none.
   */
  reloadCredentials(): void;
}

/**
 * One service process: its Redis client and both listeners. `files` are
 * those `config` names, read once at start (start-files.ts); the primary has
 * settled the operators' file among them (the generated operator's, when
 * ADMIN_CREDENTIALS_FILE is unset), and the credentials files are watched
 * from that reading.
 */
export async function runService(
  config: Config,
  files: StartFiles,
  topology: RedisTopology,
  logger: Logger,
): Promise<RunningService> {
  /** What a credentials file's re-reads tell, logged (never the secrets). */
  const logReload =
    (holders: "operators" | "services", readLine: string) =>
    (outcome: CredentialsFileTrouble | { operators: number } | { services: number }) => {
      if ("error" in outcome) {
        logger.error({ err: outcome.error.message }, `credentials file refused; ${holders} kept`);
      } else if ("missing" in outcome) {
        logger.error(
          { file: outcome.missing },
          `credentials file deleted; no ${holders} until it is back`,
        );
      } else {
        logger.info(outcome, readLine);
      }
    };
  // No file only with mutual TLS: then certificates alone name operators.
  const credentials =
    files.adminCredentials === undefined
      ? undefined
      : loadOperatorCredentials({
          file: files.adminCredentials,
          onReload: logReload("operators", "credentials file read"),
        });
  const services =
    files.serviceCredentials === undefined
      ? undefined
      : loadServiceCredentials({
          file: files.serviceCredentials,
          onReload: logReload("services", "service credentials file read"),
        });
  const { tls, adminClientCa, console: consoleAssets } = files;
  const replicasAck = {
    minReplicasAck: config.redisMinReplicasAck,
    revokeReplicasAck: config.redisRevokeReplicasAck,
  };
  const primaries = createPrimaryWatch((change) => logger.warn(change, "redis primary changed"));
  const redis = openRedisConnections({
    topology,
    minReplicasAck: config.redisMinReplicasAck,
    revocationsMayWait: revocationsMayWait(topology.kind, replicasAck),
    waitTimeoutMs: config.redisWaitTimeoutMs,
    onMainClient: primaries.watch,
    // Every Redis error event goes to the log (ioredis would print an unheard one
    // to the console, outside the JSON log). A cluster reports its nodes' apart.
    onClient: (client: RedisClient) => {
      client.on("error", (err: Error) =>
        logger.warn({ err: err.message }, "redis connection error"),
      );
      client.on("node error", (err: Error, node: string) =>
        logger.warn({ err: err.message, node }, "redis node connection error"),
      );
    },
    onRebuild: (rebuilds) =>
      logger.warn({ rebuilds }, "redis client closed for good; replaced by a new one"),
  });
  await redis
    .ready(5000)
    .catch((err: unknown) =>
      logger.warn({ err: String(err) }, "redis not ready yet; serving and retrying"),
    );
  const revocationReplicas = followRevocationReplicas(topology.kind, redis.main, replicasAck);
  const durability = {
    minReplicasAck: config.redisMinReplicasAck,
    revocationReplicasAck: revocationReplicas.current,
    waitTimeoutMs: config.redisWaitTimeoutMs,
  };
  // The SDK and exporter are imported only when OTEL_* variables turn tracing on.
  const otlp = config.tracing === undefined ? undefined : await startOtlpTracing(config.tracing);
  const app = createApp({
    redis: redis.main,
    redisWaitLanes: redis.waitLanes,
    logger,
    ...(otlp === undefined ? {} : { tracing: otlp.tracing }),
    ...(config.tracing === undefined
      ? {}
      : { traceTrustedListeners: config.tracing.trustedListeners }),
    host: config.host,
    internalHost: config.internalHost,
    internalHostnames: config.internalHostnames,
    publicPort: config.publicPort,
    internalPort: config.internalPort,
    tokenMaxLifetimeSeconds: config.tokenMaxLifetimeSeconds,
    tokenLimits: {
      maxActivePerUser: config.tokenMaxActivePerUser,
      rateLimitPerMinute: config.tokenRateLimitPerMinute,
      listRateLimitPerMinute: config.tokenListRateLimitPerMinute,
    },
    tokenCacheMaxEntries: config.tokenCacheMaxEntries,
    lastUseFlushMs: config.lastUseFlushMs,
    tokenCacheGraceMs: config.tokenCacheGraceMs,
    durability,
    listenerLimits: {
      requestTimeoutMs: config.requestTimeoutMs,
      answerTimeoutMs: config.answerTimeoutMs,
      maxConnections: config.maxConnectionsPerListener,
      // Only among workers: a single process has nobody to share the port with.
      reusePort: config.reusePort && config.workers > 1,
    },
    ...(cluster.isWorker
      ? { metricsText: (metrics) => clusterMetricsSource(metrics.registry) }
      : {}),
    corsOrigins: config.corsOrigins,
    operatorOf: credentials?.operatorOf ?? (() => undefined),
    ...(services === undefined ? {} : { serviceOf: services.serviceOf }),
    ...(adminClientCa === undefined ? {} : { adminClientCa }),
    ...(tls === undefined ? {} : { tls }),
    ...(consoleAssets === undefined ? {} : { console: consoleAssets }),
  });
  const ports = await app.start();
  logger.info(
    {
      host: config.host,
      internalHost: config.internalHost,
      ...ports,
      tls: tls !== undefined,
      // A collector's credentials may be in its URL.
      ...(config.tracing === undefined ? {} : { traces: redactedUrl(config.tracing.url) }),
    },
    "listening",
  );
  return {
    ports,
    async stop() {
      credentials?.close();
      services?.close();
      await app.stop();
      revocationReplicas.close();
      redis.close();
      await otlp?.shutdown();
    },
    reloadCredentials() {
      for (const file of [credentials, services]) {
        try {
          file?.reload();
        } catch {
          // Logged by onReload; the ones in use stay.
        }
      }
    },
  };
}
