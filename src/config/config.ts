// The service's settings: parsed once from the environment at start-up
// (parseConfig, which reports every bad variable at once), and the defaults
// of those that tests and tools pass when they build a module themselves
// (SETTING_DEFAULTS), declared once with the parsing that gives them.

import { availableParallelism } from "node:os";
import type { HostPort, RedisTopology } from "../redis/redis-topology.js";
import { ConfigError } from "./config-error.js";
import { type TracingConfig, tracingConfig } from "./tracing-config.js";

/** REDIS_REVOKE_REPLICAS_ACK: "auto", or how many replicas (0: none). */
export type RevokeReplicasAck = number | "auto";

/** The service's settings, parsed once from the environment at start-up. */
export interface Config {
  /** HOST: bind address of the public listener. Default 127.0.0.1. */
  host: string;
  /** INTERNAL_HOST: bind address of the internal listener (key registration). Default 127.0.0.1. */
  internalHost: string;
  /**
   * INTERNAL_HOSTNAMES: host names the internal listener answers to (its
   * `Host`/`:authority`), besides loopback addresses, `localhost` and
   * INTERNAL_HOST. Default none.
   */
  internalHostnames: readonly string[];
  /** PUBLIC_PORT (was HTTP_PORT): public listener (TokenService, REST, health). Default 8080. */
  publicPort: number;
  /** INTERNAL_PORT (was GRPC_PORT): internal listener (TokenService, UserKeyService, TokenIntrospectionService, gRPC health). Default 9090. */
  internalPort: number;
  /** Renamed variables set by their old name, which start-up names in one notice ({@link deprecationNotice}). */
  oldNames: readonly RenamedVariable[];
  /**
   * The Redis to use: REDIS_URL (`redis://`, `rediss://` or `unix:///path`),
   * REDIS_CLUSTER_NODES, or REDIS_SENTINELS with REDIS_SENTINEL_NAME (with
   * REDIS_PASSWORD and REDIS_TLS for those two). Undefined: none set, so an
   * embedded redis-server runs.
   */
  redis: RedisTopology | undefined;
  /** REDIS_MIN_REPLICAS_ACK: replicas that must confirm each write (WAIT). Default 0. */
  redisMinReplicasAck: number;
  /**
   * REDIS_REVOKE_REPLICAS_ACK: replicas that must confirm each revocation (a
   * delete, an operator's revoke, a key's removal) before it is acknowledged:
   * "auto" (one where the topology has replicas: Sentinel, a Cluster whose
   * primaries have some) or 0 to 16; never fewer than REDIS_MIN_REPLICAS_ACK.
   * Default auto.
   */
  redisRevokeReplicasAck: RevokeReplicasAck;
  /** REDIS_WAIT_TIMEOUT_MS: how long WAIT may take before the write counts as unconfirmed. Default 500. */
  redisWaitTimeoutMs: number;
  /** EMBEDDED_REDIS_DIR: data folder of the embedded redis-server (relative to the cwd). Default .data/redis. */
  embeddedRedisDir: string;
  /** WORKERS: service processes sharing the ports. Default: the cores this process may use. */
  workers: number;
  /**
   * REUSE_PORT: with more than one worker, each binds its own listening
   * sockets (SO_REUSEPORT) and the kernel spreads connections, instead of
   * the primary accepting and handing them on. Default true on Linux, where
   * node has it; false elsewhere.
   */
  reusePort: boolean;
  /**
   * WORKER_SEMI_SPACE_MB: each worker's V8 semi-space cap (`--max-semi-space-size`),
   * 0 for V8's own sizing. V8 sizes the young generation from the machine's
   * memory (64 MB of new space on a 24 GiB host); 2 takes an idle worker's PSS
   * from 87 to 61 MB but costs every check 5-10 % of its CPU
   * (docs/operating-at-scale.md), so the default is 0: a memory-bound host
   * opts in. Not used with WORKERS=1.
   */
  workerSemiSpaceMb: number;
  /** TLS_CERT_FILE and TLS_KEY_FILE (PEM): serve both listeners over TLS. Default: cleartext. */
  tls: { certFile: string; keyFile: string } | undefined;
  /**
   * ADMIN_CLIENT_CA_FILE (PEM, needs TLS): the internal listener asks for
   * client certificates, and one this CA issued names an operator by its
   * subject's CN (mutual TLS). Default: none.
   */
  adminClientCaFile: string | undefined;
  /** TOKEN_MAX_LIFETIME_SECONDS: longest token lifetime. Default 31536000 (365 days). */
  tokenMaxLifetimeSeconds: number;
  /** TOKEN_MAX_ACTIVE_PER_USER: most live tokens per user, session ones included. Default 1000. */
  tokenMaxActivePerUser: number;
  /** TOKEN_RATE_LIMIT_PER_MINUTE: signed create/delete calls per user per minute. Default 60. */
  tokenRateLimitPerMinute: number;
  /** TOKEN_LIST_RATE_LIMIT_PER_MINUTE: ListTokens calls (pages) per user per minute. Default 120. */
  tokenListRateLimitPerMinute: number;
  /**
   * TOKEN_CACHE (`on` or `off`, default on) and TOKEN_CACHE_MAX_ENTRIES
   * (default 100000): most token records kept in memory for bearer checks;
   * 0 when TOKEN_CACHE is off.
   */
  tokenCacheMaxEntries: number;
  /**
   * TOKEN_CACHE_GRACE_MS: while Redis fails to answer, how long after the
   * cache lost it the tokens it held may still answer checks (0 to 30000;
   * 0: a 503 at once, as without the grace). Default 3000.
   */
  tokenCacheGraceMs: number;
  /**
   * How often each worker writes the last uses it noted (ListTokens'
   * lastUsedAt): no variable, so that a use shows within 15 s as the
   * contract says. 10000.
   */
  lastUseFlushMs: number;
  /** REQUEST_TIMEOUT_MS: time allowed to receive a whole request, HTTP/1.1 and HTTP/2. Default 30000. */
  requestTimeoutMs: number;
  /**
   * ANSWER_TIMEOUT_MS: time a client has to take in an answer once it has
   * begun (HTTP/1.1 response, HTTP/2 stream); then it is reset. Default 10000.
   */
  answerTimeoutMs: number;
  /** MAX_CONNECTIONS_PER_LISTENER: most open connections per listener and process. Default 4096. */
  maxConnectionsPerListener: number;
  /**
   * CORS_ORIGINS: the browser origins (`https://app.example.com`, exact)
   * allowed to call the public REST API from other sites. Default none: CORS
   * is off.
   */
  corsOrigins: readonly string[];
  /** LOG_LEVEL: fatal, error, warn, info, debug, trace or silent. Default info. */
  logLevel: string;
  /**
   * ADMIN_CREDENTIALS_FILE: the operators allowed to call the admin RPCs, one
   * a line, `<operator name> sha256:<64 hex of the secret's SHA-256>`.
   * Default: the operator `local` generated in the data folder
   * (EMBEDDED_REDIS_DIR) on the first start.
   */
  adminCredentialsFile: string | undefined;
  /**
   * SERVICE_CREDENTIALS_FILE: when set, IntrospectToken and `/auth` need a
   * calling service's secret in `X-Service-Credential`; the services listed
   * as in ADMIN_CREDENTIALS_FILE. Default: off.
   */
  serviceCredentialsFile: string | undefined;
  /** CONSOLE: serve the token console at `/` on the public listener (`on` or `off`). Default on. */
  console: boolean;
  /** OpenTelemetry traces from the standard OTEL_* variables (tracing-config.ts). Default off. */
  tracing: TracingConfig | undefined;
}

export { ConfigError } from "./config-error.js";

/**
 * The defaults of the settings that tests and tools pass when they build a
 * module themselves: declared once, here. parseConfig gives them when the
 * variable is unset; the modules below src/config take every setting
 * complete and apply none (test/unit/config/config-setting-defaults.test.ts,
 * which also holds each name to the Config field parseConfig gives it to).
 */
export const SETTING_DEFAULTS = {
  /** TOKEN_MAX_ACTIVE_PER_USER. */
  tokenMaxActivePerUser: 1000,
  /** TOKEN_RATE_LIMIT_PER_MINUTE. */
  tokenRateLimitPerMinute: 60,
  /** TOKEN_LIST_RATE_LIMIT_PER_MINUTE. */
  tokenListRateLimitPerMinute: 120,
  /**
   * REDIS_REVOKE_REPLICAS_ACK: "auto" waits for one replica where the
   * topology has replicas (src/store/revocation-replicas.ts).
   */
  redisRevokeReplicasAck: "auto",
  /** REDIS_WAIT_TIMEOUT_MS. */
  redisWaitTimeoutMs: 500,
  /** REQUEST_TIMEOUT_MS. */
  requestTimeoutMs: 30_000,
  /** ANSWER_TIMEOUT_MS. */
  answerTimeoutMs: 10_000,
  /** MAX_CONNECTIONS_PER_LISTENER. */
  maxConnectionsPerListener: 4096,
  /** TOKEN_CACHE_MAX_ENTRIES: about 30 MB a process (docs/operating-at-scale.md). */
  tokenCacheMaxEntries: 100_000,
  /**
   * TOKEN_CACHE_GRACE_MS: rides through a Redis restart (issue 43); a Sentinel
   * failover takes longer (docs/operating-at-scale.md).
   */
  tokenCacheGraceMs: 3000,
  /** No variable: a use shows in ListTokens within 15 s (src/store/last-use-recorder.ts). */
  lastUseFlushMs: 10_000,
} as const;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
// 100 years: keeps every expiry a four-digit-year date.
const MAX_LIFETIME_LIMIT = 3_153_600_000;

function integer(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") {
    return fallback;
  }
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** REDIS_REVOKE_REPLICAS_ACK: "auto" or a count of replicas, as REDIS_MIN_REPLICAS_ACK's. */
function revokeReplicasAck(env: Record<string, string | undefined>): RevokeReplicasAck {
  const raw = set(env, "REDIS_REVOKE_REPLICAS_ACK") ?? SETTING_DEFAULTS.redisRevokeReplicasAck;
  if (raw === "auto") {
    return raw;
  }
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value > 16) {
    throw new ConfigError(
      `REDIS_REVOKE_REPLICAS_ACK must be auto or an integer from 0 to 16, got "${raw}"`,
    );
  }
  return value;
}

function set(env: Record<string, string | undefined>, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === "" ? undefined : value;
}

/** A variable that replaced an older name, which is still read until the next minor release. */
export interface RenamedVariable {
  readonly name: string;
  readonly old: string;
}

// Named for who may reach each listener: both serve every protocol.
const PUBLIC_PORT: RenamedVariable = { name: "PUBLIC_PORT", old: "HTTP_PORT" };
const INTERNAL_PORT: RenamedVariable = { name: "INTERNAL_PORT", old: "GRPC_PORT" };

/**
 * The name to read `variable` from: the new one unless only the old one is
 * set. Both set to different values is a ConfigError, since either choice
 * would surprise whoever set the other.
 */
function nameToRead(env: Record<string, string | undefined>, variable: RenamedVariable): string {
  const current = set(env, variable.name);
  const old = set(env, variable.old);
  if (old === undefined || current === undefined) {
    return old === undefined ? variable.name : variable.old;
  }
  if (old !== current) {
    throw new ConfigError(
      `${variable.name} and ${variable.old} (its deprecated name) are both set, to "${current}" and "${old}": set only ${variable.name}`,
    );
  }
  return variable.name;
}

/** The one start-up line naming the old names in use and what replaces each. */
export function deprecationNotice(oldNames: readonly RenamedVariable[]): string {
  const each = oldNames.map((v) => `${v.old} is deprecated, use ${v.name}`).join("; ");
  return `${each} (the old names are removed in the next minor release)`;
}

function onOff(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = set(env, name);
  if (raw === undefined) {
    return fallback;
  }
  if (raw !== "on" && raw !== "off") {
    throw new ConfigError(`${name} must be on or off, got "${raw}"`);
  }
  return raw === "on";
}

function hostPorts(name: string, raw: string): HostPort[] {
  return raw.split(",").map((item) => {
    const match = /^\s*\[?([^\s\]]+?)\]?:(\d{1,5})\s*$/.exec(item);
    const port = Number(match?.[2]);
    if (match?.[1] === undefined || port < 1 || port > 65_535) {
      throw new ConfigError(`${name} must be a comma-separated list of host:port, got "${raw}"`);
    }
    return { host: match[1], port };
  });
}

function redisTopology(env: Record<string, string | undefined>): RedisTopology | undefined {
  const url = set(env, "REDIS_URL");
  const clusterNodes = set(env, "REDIS_CLUSTER_NODES");
  const sentinels = set(env, "REDIS_SENTINELS");
  const given = [url, clusterNodes, sentinels].filter((v) => v !== undefined).length;
  if (given > 1) {
    throw new ConfigError(
      "REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS are alternatives; set only one",
    );
  }
  const password = set(env, "REDIS_PASSWORD");
  const tlsRaw = set(env, "REDIS_TLS") ?? "false";
  if (!["true", "false", "1", "0"].includes(tlsRaw)) {
    throw new ConfigError(`REDIS_TLS must be true or false, got "${tlsRaw}"`);
  }
  const secure = {
    ...(password === undefined ? {} : { password }),
    ...(tlsRaw === "true" || tlsRaw === "1" ? { tls: true } : {}),
  };
  if (url !== undefined) {
    if (url.startsWith("unix://")) {
      const path = url.slice("unix://".length);
      if (!path.startsWith("/")) {
        throw new ConfigError('REDIS_URL of a socket must be "unix:///absolute/path"');
      }
      return { kind: "socket", path };
    }
    if (!/^rediss?:\/\/[^\s]+$/.test(url)) {
      throw new ConfigError('REDIS_URL must start with "redis://", "rediss://" or "unix://"');
    }
    return { kind: "url", url };
  }
  if (clusterNodes !== undefined) {
    return { kind: "cluster", nodes: hostPorts("REDIS_CLUSTER_NODES", clusterNodes), ...secure };
  }
  if (sentinels !== undefined) {
    const list = hostPorts("REDIS_SENTINELS", sentinels);
    const name = set(env, "REDIS_SENTINEL_NAME");
    if (name === undefined) {
      throw new ConfigError("REDIS_SENTINEL_NAME must be set with REDIS_SENTINELS");
    }
    return {
      kind: "sentinel",
      sentinels: list,
      name,
      ...secure,
    };
  }
  return undefined;
}

function tlsFiles(env: Record<string, string | undefined>): Config["tls"] {
  const certFile = set(env, "TLS_CERT_FILE");
  const keyFile = set(env, "TLS_KEY_FILE");
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError("TLS_CERT_FILE and TLS_KEY_FILE must be set together");
  }
  return certFile === undefined || keyFile === undefined ? undefined : { certFile, keyFile };
}

function adminClientCaFile(
  env: Record<string, string | undefined>,
  tls: Config["tls"],
): string | undefined {
  const file = set(env, "ADMIN_CLIENT_CA_FILE");
  if (file !== undefined && tls === undefined) {
    throw new ConfigError(
      "ADMIN_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE: client certificates come with TLS",
    );
  }
  return file;
}

/** What the machine and runtime offer, which some defaults follow. */
export interface HostFacts {
  /** Cores this process may use (`os.availableParallelism()`). */
  cores: number;
  /** Whether `listen({ reusePort })` works here: Linux (every node the service runs on has it). */
  reusePortSupported: boolean;
}

/** The facts of the running process. */
export function hostFacts(): HostFacts {
  return {
    cores: availableParallelism(),
    reusePortSupported: process.platform === "linux",
  };
}

function flag(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = set(env, name);
  if (raw === undefined) {
    return fallback;
  }
  if (!["true", "false", "1", "0"].includes(raw)) {
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  }
  return raw === "true" || raw === "1";
}

/**
 * CORS_ORIGINS: comma-separated origins, each exactly as a browser sends it
 * in `Origin` (scheme, host, port only when not the default; no path, no
 * trailing slash, lowercase), so that matching is a plain comparison. `*` and
 * `null` are refused: a listed origin is one the operator trusts.
 */
function corsOrigins(env: Record<string, string | undefined>): string[] {
  const raw = set(env, "CORS_ORIGINS");
  if (raw === undefined) {
    return [];
  }
  return raw.split(",").map((item) => {
    const origin = item.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (
      parsed === undefined ||
      (parsed.protocol !== "https:" && parsed.protocol !== "http:") ||
      parsed.origin !== origin
    ) {
      throw new ConfigError(
        `CORS_ORIGINS must be a comma-separated list of origins such as https://app.example.com (scheme, host and port only), got "${origin}"`,
      );
    }
    return origin;
  });
}

// A DNS name: labels of letters, digits and hyphens.
const HOSTNAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** INTERNAL_HOSTNAMES: comma-separated DNS names, compared lowercase. */
function internalHostnames(env: Record<string, string | undefined>): string[] {
  const raw = set(env, "INTERNAL_HOSTNAMES");
  if (raw === undefined) {
    return [];
  }
  return raw.split(",").map((item) => {
    const name = item.trim().toLowerCase().replace(/\.$/, "");
    if (!HOSTNAME.test(name)) {
      throw new ConfigError(
        `INTERNAL_HOSTNAMES must be a comma-separated list of host names such as tokens.internal, got "${item.trim()}"`,
      );
    }
    return name;
  });
}

/**
 * Parses and checks the environment; throws one ConfigError naming every bad
 * variable, so that a start shows them all at once rather than one per try.
 */
export function parseConfig(
  env: Record<string, string | undefined>,
  host: HostFacts = hostFacts(),
): Config {
  const problems: string[] = [];
  // A bad variable is noted and stands in with a value nobody uses: the
  // config is thrown away once a problem is known.
  const checked = <T>(parse: () => T, standIn: T): T => {
    try {
      return parse();
    } catch (err) {
      if (err instanceof ConfigError) {
        problems.push(...err.problems);
        return standIn;
      }
      throw err;
    }
  };
  const reusePort = checked(() => {
    const on = flag(env, "REUSE_PORT", host.reusePortSupported);
    if (on && !host.reusePortSupported) {
      throw new ConfigError(`REUSE_PORT needs Linux (this is ${process.platform})`);
    }
    return on;
  }, false);
  const config: Config = {
    host: set(env, "HOST") ?? "127.0.0.1",
    internalHost: set(env, "INTERNAL_HOST") ?? "127.0.0.1",
    internalHostnames: checked(() => internalHostnames(env), []),
    publicPort: checked(() => integer(env, nameToRead(env, PUBLIC_PORT), 8080, 0, 65_535), 0),
    internalPort: checked(() => integer(env, nameToRead(env, INTERNAL_PORT), 9090, 0, 65_535), 0),
    oldNames: [PUBLIC_PORT, INTERNAL_PORT].filter((v) => set(env, v.old) !== undefined),
    redis: checked(() => redisTopology(env), undefined),
    redisMinReplicasAck: checked(() => integer(env, "REDIS_MIN_REPLICAS_ACK", 0, 0, 16), 0),
    redisRevokeReplicasAck: checked(() => revokeReplicasAck(env), 0),
    redisWaitTimeoutMs: checked(
      () => integer(env, "REDIS_WAIT_TIMEOUT_MS", SETTING_DEFAULTS.redisWaitTimeoutMs, 1, 60_000),
      0,
    ),
    embeddedRedisDir: set(env, "EMBEDDED_REDIS_DIR") ?? ".data/redis",
    workers: checked(
      () => integer(env, "WORKERS", Math.min(Math.max(host.cores, 1), 256), 1, 256),
      1,
    ),
    reusePort,
    workerSemiSpaceMb: checked(() => integer(env, "WORKER_SEMI_SPACE_MB", 0, 0, 1024), 0),
    tls: checked(() => tlsFiles(env), undefined),
    // Read after the rest: it depends on tls, and problems are listed in the variables' order.
    adminClientCaFile: undefined,
    tokenMaxLifetimeSeconds: checked(
      () => integer(env, "TOKEN_MAX_LIFETIME_SECONDS", 31_536_000, 1, MAX_LIFETIME_LIMIT),
      1,
    ),
    tokenMaxActivePerUser: checked(
      () =>
        integer(
          env,
          "TOKEN_MAX_ACTIVE_PER_USER",
          SETTING_DEFAULTS.tokenMaxActivePerUser,
          1,
          1_000_000,
        ),
      1,
    ),
    tokenRateLimitPerMinute: checked(
      () =>
        integer(
          env,
          "TOKEN_RATE_LIMIT_PER_MINUTE",
          SETTING_DEFAULTS.tokenRateLimitPerMinute,
          1,
          1_000_000,
        ),
      1,
    ),
    tokenListRateLimitPerMinute: checked(
      () =>
        integer(
          env,
          "TOKEN_LIST_RATE_LIMIT_PER_MINUTE",
          SETTING_DEFAULTS.tokenListRateLimitPerMinute,
          1,
          1_000_000,
        ),
      1,
    ),
    tokenCacheMaxEntries: checked(
      () =>
        onOff(env, "TOKEN_CACHE", true)
          ? integer(
              env,
              "TOKEN_CACHE_MAX_ENTRIES",
              SETTING_DEFAULTS.tokenCacheMaxEntries,
              1,
              10_000_000,
            )
          : 0,
      0,
    ),
    tokenCacheGraceMs: checked(
      () => integer(env, "TOKEN_CACHE_GRACE_MS", SETTING_DEFAULTS.tokenCacheGraceMs, 0, 30_000),
      0,
    ),
    lastUseFlushMs: SETTING_DEFAULTS.lastUseFlushMs,
    requestTimeoutMs: checked(
      () => integer(env, "REQUEST_TIMEOUT_MS", SETTING_DEFAULTS.requestTimeoutMs, 100, 3_600_000),
      100,
    ),
    answerTimeoutMs: checked(
      () => integer(env, "ANSWER_TIMEOUT_MS", SETTING_DEFAULTS.answerTimeoutMs, 100, 3_600_000),
      100,
    ),
    maxConnectionsPerListener: checked(
      () =>
        integer(
          env,
          "MAX_CONNECTIONS_PER_LISTENER",
          SETTING_DEFAULTS.maxConnectionsPerListener,
          1,
          1_000_000,
        ),
      1,
    ),
    corsOrigins: checked(() => corsOrigins(env), []),
    logLevel: checked(() => {
      const level = set(env, "LOG_LEVEL") ?? "info";
      if (!LOG_LEVELS.includes(level)) {
        throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${level}"`);
      }
      return level;
    }, "info"),
    console: checked(() => onOff(env, "CONSOLE", true), false),
    tracing: checked(() => tracingConfig(env), undefined),
    adminCredentialsFile: set(env, "ADMIN_CREDENTIALS_FILE"),
    serviceCredentialsFile: set(env, "SERVICE_CREDENTIALS_FILE"),
  };
  config.adminClientCaFile = checked(() => adminClientCaFile(env, config.tls), undefined);
  if (problems.length > 0) {
    throw new ConfigError(problems);
  }
  return config;
}
