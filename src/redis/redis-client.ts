import { Redis } from "ioredis";

/** Where the Redis server is: a `redis://`/`rediss://` URL or a unix socket path. */
export type RedisLocation = { url: string } | { path: string };

export interface RedisClientOptions {
  location: RedisLocation;
  /** A command not answered within this time fails (the request becomes UNAVAILABLE). Default 1000 ms. */
  commandTimeoutMs?: number;
  /** Longest wait for a connection to open. Default 1000 ms. */
  connectTimeoutMs?: number;
  /** Longest pause between reconnection attempts; they never stop. Default 1000 ms. */
  maxReconnectDelayMs?: number;
}

/**
 * A client tuned to fail fast and recover by itself: commands time out, and
 * while the connection is down they fail at once instead of waiting in an
 * unbounded offline queue, so callers answer UNAVAILABLE within about a second.
 */
export function createRedisClient(opts: RedisClientOptions): Redis {
  const maxDelay = opts.maxReconnectDelayMs ?? 1000;
  const common = {
    commandTimeout: opts.commandTimeoutMs ?? 1000,
    connectTimeout: opts.connectTimeoutMs ?? 1000,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, maxDelay),
    lazyConnect: false,
  };
  return "url" in opts.location
    ? new Redis(opts.location.url, common)
    : new Redis({ ...common, path: opts.location.path });
}

/** Resolves once the client is ready, or rejects after `timeoutMs`. */
export function waitForRedisReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") {
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off("ready", onReady);
      reject(new Error(`Redis was not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    function onReady(): void {
      clearTimeout(timer);
      resolve();
    }
    redis.once("ready", onReady);
  });
}
