import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { RedisTopology } from "./redis-topology.js";

/** A client of one Redis, a Sentinel-managed primary or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  topology: RedisTopology;
  /** A command not answered within this time fails (the request becomes UNAVAILABLE). Default 1000 ms. */
  commandTimeoutMs?: number;
  /** Longest wait for a connection to open. Default 1000 ms. */
  connectTimeoutMs?: number;
  /** Longest pause between reconnection attempts; they never stop. Default 1000 ms. */
  maxReconnectDelayMs?: number;
  /**
   * Redis Cluster: how often the slot map is re-read even without a MOVED
   * reply, so that a promoted replica is found soon after a failover.
   * Default 1000 ms.
   */
  slotsRefreshIntervalMs?: number;
}

/**
 * A client tuned to fail fast and recover by itself: commands time out, and
 * while a connection is down they fail instead of waiting in an unbounded
 * offline queue, so callers answer UNAVAILABLE within about a second; the
 * client reconnects (and, in a cluster, re-reads the slot map) on its own.
 * The ioredis defaults (no command timeout, an unbounded offline queue, 20
 * retries per command) would let requests hang through an outage.
 */
export function createRedisClient(opts: RedisClientOptions): RedisClient {
  const maxDelay = opts.maxReconnectDelayMs ?? 1000;
  const backoff = (attempt: number) => Math.min(attempt * 100, maxDelay);
  const node: RedisOptions = {
    commandTimeout: opts.commandTimeoutMs ?? 1000,
    connectTimeout: opts.connectTimeoutMs ?? 1000,
    maxRetriesPerRequest: 0,
    // Commands issued in the same tick share one socket write: under load
    // this saves a system call per command (the largest cost after verify).
    enableAutoPipelining: true,
  };
  const { topology } = opts;
  switch (topology.kind) {
    case "url":
      return new Redis(topology.url, {
        ...node,
        enableOfflineQueue: false,
        retryStrategy: backoff,
      });
    case "socket":
      return new Redis({
        ...node,
        path: topology.path,
        enableOfflineQueue: false,
        retryStrategy: backoff,
      });
    case "sentinel":
      return new Redis({
        ...node,
        sentinels: topology.sentinels,
        name: topology.name,
        ...(topology.password === undefined
          ? {}
          : { password: topology.password, sentinelPassword: topology.password }),
        ...(topology.tls === true ? { tls: {}, enableTLSForSentinelMode: true } : {}),
        enableOfflineQueue: false,
        retryStrategy: backoff,
        sentinelRetryStrategy: backoff,
        // Reconnect to the new primary as soon as the sentinels announce a switch.
        failoverDetector: true,
      });
    case "cluster":
      return new Cluster(topology.nodes, {
        redisOptions: {
          ...node,
          ...(topology.password === undefined ? {} : { password: topology.password }),
          ...(topology.tls === true ? { tls: {} } : {}),
        },
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        clusterRetryStrategy: backoff,
        // A failover takes the cluster's node timeout plus an election; retry a
        // redirected or refused command shortly, a bounded number of times.
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        retryDelayOnTryAgain: 100,
        maxRedirections: 6,
        slotsRefreshTimeout: 1000,
        slotsRefreshInterval: opts.slotsRefreshIntervalMs ?? 1000,
      });
  }
}

/** Resolves once the client is ready, or rejects after `timeoutMs`. */
export function waitForRedisReady(redis: RedisClient, timeoutMs: number): Promise<void> {
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
