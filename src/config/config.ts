/** The service's settings, parsed once from the environment at start-up. */
export interface Config {
  /** HOST: bind address of both listeners. Default 127.0.0.1. */
  host: string;
  /** HTTP_PORT: public listener (TokenService, REST, health). Default 8080. */
  httpPort: number;
  /** GRPC_PORT: internal listener (TokenService, UserKeyService, gRPC health). Default 9090. */
  grpcPort: number;
  /** REDIS_URL: redis:// or rediss:// URL; unset runs an embedded redis-server. */
  redisUrl: string | undefined;
  /** TOKEN_MAX_LIFETIME_SECONDS: longest token lifetime. Default 31536000 (365 days). */
  tokenMaxLifetimeSeconds: number;
  /** TOKEN_MAX_ACTIVE_PER_USER: most live tokens per user, session ones included. Default 1000. */
  tokenMaxActivePerUser: number;
  /** TOKEN_RATE_LIMIT_PER_MINUTE: signed create/delete calls per user per minute. Default 60. */
  tokenRateLimitPerMinute: number;
  /** LOG_LEVEL: fatal, error, warn, info, debug, trace or silent. Default info. */
  logLevel: string;
}

/** A setting that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

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

/** Parses and checks the environment; throws ConfigError naming the first bad variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const redisUrl = env.REDIS_URL === "" ? undefined : env.REDIS_URL;
  if (redisUrl !== undefined && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must start with "redis://" or "rediss://"');
  }
  const logLevel = env.LOG_LEVEL === undefined || env.LOG_LEVEL === "" ? "info" : env.LOG_LEVEL;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  }
  const host = env.HOST === undefined || env.HOST === "" ? "127.0.0.1" : env.HOST;
  return {
    host,
    httpPort: integer(env, "HTTP_PORT", 8080, 0, 65_535),
    grpcPort: integer(env, "GRPC_PORT", 9090, 0, 65_535),
    redisUrl,
    tokenMaxLifetimeSeconds: integer(
      env,
      "TOKEN_MAX_LIFETIME_SECONDS",
      31_536_000,
      1,
      MAX_LIFETIME_LIMIT,
    ),
    tokenMaxActivePerUser: integer(env, "TOKEN_MAX_ACTIVE_PER_USER", 1000, 1, 1_000_000),
    tokenRateLimitPerMinute: integer(env, "TOKEN_RATE_LIMIT_PER_MINUTE", 60, 1, 1_000_000),
    logLevel,
  };
}
