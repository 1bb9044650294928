import { Writable } from "node:stream";
import type { OperatorLookup } from "../../src/admin-auth/call-gate.js";
import type { ServiceLookup } from "../../src/admin-auth/service-credential.js";
import { type RevokeReplicasAck, SETTING_DEFAULTS } from "../../src/config/config.js";
import { createLogger } from "../../src/log/logger.js";
import { createPrimaryWatch } from "../../src/redis/primary-watch.js";
import type { RedisClient } from "../../src/redis/redis-client.js";
import { openRedisConnections, type RedisConnections } from "../../src/redis/redis-connections.js";
import type { RedisTopology } from "../../src/redis/redis-topology.js";
import { createApp } from "../../src/server/app.js";
import { loadConsoleAssets } from "../../src/server/console-assets.js";
import {
  followRevocationReplicas,
  revocationsMayWait,
} from "../../src/store/revocation-replicas.js";
import { buildIfStale } from "./build.js";
import { issuedSignatures } from "./signing.js";
import { testOperatorLookup } from "./test-operator.js";

const TOKEN_SHAPE = /pt_[A-Za-z0-9_-]{43}/;
const SIGNATURE_SHAPE = /[0-9a-fA-F]{128}/;

/**
 * Secret hygiene, checked over every log line of every service a test starts:
 * no bearer token, no signature-shaped value, and none of the signatures this
 * process made.
 */
export function assertNoSecretsInLogs(logs: readonly string[]): void {
  for (const line of logs) {
    if (TOKEN_SHAPE.test(line) || SIGNATURE_SHAPE.test(line)) {
      throw new Error(`a secret reached the log: ${line}`);
    }
  }
  const all = logs.join("\n");
  for (const signature of issuedSignatures) {
    if (all.includes(signature)) {
      throw new Error("an issued signature reached the log");
    }
  }
}

export interface TestService {
  /** Base URL of the public listener. */
  readonly publicUrl: string;
  /** Base URL of the internal listener. */
  readonly internalUrl: string;
  /** host:port of the internal listener, for @grpc/grpc-js. */
  readonly internalAddress: string;
  /** host:port of the public listener, for @grpc/grpc-js. */
  readonly publicAddress: string;
  /** The service's own Redis client (the one in use now: a closed one is replaced). */
  readonly redis: RedisClient;
  /** All the service's Redis clients. */
  readonly redisConnections: RedisConnections;
  /** Every log line the service wrote, as text. */
  readonly logs: string[];
  stop(): Promise<void>;
}

export interface TestServiceOptions {
  /** The test Redis: a URL, or any topology (e.g. a test cluster). */
  redisUrl?: string;
  redis?: RedisTopology;
  /** Replicas that must confirm each write. Default 0. */
  redisMinReplicasAck?: number;
  /** Replicas that must confirm each revocation. Default the service's ("auto"). */
  redisRevokeReplicasAck?: RevokeReplicasAck;
  /** How long WAIT may take. Default the service's. */
  redisWaitTimeoutMs?: number;
  /** Serve TLS with this PEM certificate and key. */
  tls?: { cert: string; key: string };
  /** With `tls`: the CA whose client certificates name operators (mutual TLS). */
  adminClientCa?: string;
  tokenMaxLifetimeSeconds?: number;
  tokenMaxActivePerUser?: number;
  /** Default here 100000: most suites sign many calls per user within a minute. */
  tokenRateLimitPerMinute?: number;
  /** ListTokens calls per user per minute. Default 100000 (high, as the create/delete rate). */
  tokenListRateLimitPerMinute?: number;
  /** Most token records kept in memory; 0 turns the token cache off. Default the service's (on). */
  tokenCacheMaxEntries?: number;
  /** Time a client has to take in an answer with bytes waiting. Default the service's. */
  answerTimeoutMs?: number;
  /** Time allowed to receive a whole request. Default the service's. */
  requestTimeoutMs?: number;
  /** Most open connections per listener. Default the service's. */
  maxConnectionsPerListener?: number;
  /** Lowest level of the lines kept in `logs`. Default "info". */
  logLevel?: string;
  /** Browser origins allowed to call the REST API. Default none (CORS off). */
  corsOrigins?: readonly string[];
  /** Serve the token console, built from the current sources first. Default false. */
  console?: boolean;
  /** Who may call the admin RPCs. Default: the test operator (test-operator.ts). */
  operatorOf?: OperatorLookup;
  /** The services that may call IntrospectToken and /auth (SERVICE_CREDENTIALS_FILE). Default: off. */
  serviceOf?: ServiceLookup;
  /** Host names the internal listener answers to besides loopback (INTERNAL_HOSTNAMES). */
  internalHostnames?: readonly string[];
  /** How often last uses are written (ListTokens' lastUsedAt). Default the service's (10 s). */
  lastUseFlushMs?: number;
  /** TOKEN_CACHE_GRACE_MS. Default the service's. */
  tokenCacheGraceMs?: number;
  /** Whether the check lane answers what the token cache can. Default the service's (on). */
  checkLane?: boolean;
}

/** The whole service on free ports, logging into memory. */
export async function startTestService(opts: TestServiceOptions): Promise<TestService> {
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs.push(chunk.toString());
      callback();
    },
  });
  const logger = createLogger({ level: opts.logLevel ?? "info", destination });
  const topology: RedisTopology | undefined =
    opts.redis ?? (opts.redisUrl === undefined ? undefined : { kind: "url", url: opts.redisUrl });
  if (topology === undefined) {
    throw new Error("startTestService needs redisUrl or redis");
  }
  const replicasAck = {
    minReplicasAck: opts.redisMinReplicasAck ?? 0,
    revokeReplicasAck: opts.redisRevokeReplicasAck ?? SETTING_DEFAULTS.redisRevokeReplicasAck,
  };
  const primaries = createPrimaryWatch((change) => logger.warn(change, "redis primary changed"));
  const redis = openRedisConnections({
    topology,
    minReplicasAck: replicasAck.minReplicasAck,
    revocationsMayWait: revocationsMayWait(topology.kind, replicasAck),
    onMainClient: primaries.watch,
    waitTimeoutMs: opts.redisWaitTimeoutMs ?? SETTING_DEFAULTS.redisWaitTimeoutMs,
    onClient: (client) =>
      client.on("error", () => {
        // Outage tests stop Redis on purpose; the client reconnects by itself.
      }),
    onRebuild: (rebuilds) => logger.warn({ rebuilds }, "redis client replaced"),
  });
  await redis.ready(5000);
  const revocationReplicas = followRevocationReplicas(topology.kind, redis.main, replicasAck);
  if (opts.console === true) {
    // The console is served from dist/console: never a build older than src/.
    buildIfStale();
  }
  const app = createApp({
    redis: redis.main,
    redisWaitLanes: redis.waitLanes,
    logger,
    ...(opts.console === true ? { console: loadConsoleAssets() } : {}),
    host: "127.0.0.1",
    operatorOf: opts.operatorOf ?? testOperatorLookup(),
    ...(opts.serviceOf === undefined ? {} : { serviceOf: opts.serviceOf }),
    publicPort: 0,
    internalPort: 0,
    tokenMaxLifetimeSeconds: opts.tokenMaxLifetimeSeconds ?? 31_536_000,
    tokenLimits: {
      maxActivePerUser: opts.tokenMaxActivePerUser ?? SETTING_DEFAULTS.tokenMaxActivePerUser,
      rateLimitPerMinute: opts.tokenRateLimitPerMinute ?? 100_000,
      listRateLimitPerMinute: opts.tokenListRateLimitPerMinute ?? 100_000,
    },
    tokenCacheMaxEntries: opts.tokenCacheMaxEntries ?? SETTING_DEFAULTS.tokenCacheMaxEntries,
    lastUseFlushMs: opts.lastUseFlushMs ?? SETTING_DEFAULTS.lastUseFlushMs,
    tokenCacheGraceMs: opts.tokenCacheGraceMs ?? SETTING_DEFAULTS.tokenCacheGraceMs,
    durability: {
      minReplicasAck: opts.redisMinReplicasAck,
      revocationReplicasAck: revocationReplicas.current,
      waitTimeoutMs: opts.redisWaitTimeoutMs ?? SETTING_DEFAULTS.redisWaitTimeoutMs,
    },
    listenerLimits: {
      requestTimeoutMs: opts.requestTimeoutMs ?? SETTING_DEFAULTS.requestTimeoutMs,
      answerTimeoutMs: opts.answerTimeoutMs ?? SETTING_DEFAULTS.answerTimeoutMs,
      maxConnections: opts.maxConnectionsPerListener ?? SETTING_DEFAULTS.maxConnectionsPerListener,
    },
    ...(opts.tls === undefined ? {} : { tls: opts.tls }),
    ...(opts.adminClientCa === undefined ? {} : { adminClientCa: opts.adminClientCa }),
    ...(opts.corsOrigins === undefined ? {} : { corsOrigins: opts.corsOrigins }),
    ...(opts.internalHostnames === undefined ? {} : { internalHostnames: opts.internalHostnames }),
    ...(opts.checkLane === undefined ? {} : { checkLane: opts.checkLane }),
  });
  const { publicPort, internalPort } = await app.start();
  return {
    publicUrl: `http://127.0.0.1:${publicPort}`,
    internalUrl: `http://127.0.0.1:${internalPort}`,
    publicAddress: `127.0.0.1:${publicPort}`,
    internalAddress: `127.0.0.1:${internalPort}`,
    get redis() {
      return redis.main.client;
    },
    redisConnections: redis,
    logs,
    async stop() {
      await app.stop(1000);
      revocationReplicas.close();
      redis.close();
      assertNoSecretsInLogs(logs);
    },
  };
}
