import type { RedisClient } from "./redis-client.js";

/**
 * Where code that talks to Redis gets its client: read `client` for each
 * call and never keep it, so that a client replaced after it closed reaches
 * every caller (stores, readiness, metrics).
 */
export interface RedisHolder {
  readonly client: RedisClient;
}

/** A holder that replaces its client when the client closes for good. */
export interface RebuildingRedisHolder extends RedisHolder {
  /** Closes the client in use and builds no other. */
  close(): void;
}

export interface RebuildingRedisHolderOptions {
  /** Builds a client (it connects by itself). */
  create: () => RedisClient;
  /** Told of each client built, the first included (e.g. to listen to its errors). */
  onClient?: (client: RedisClient) => void;
  /** Told when a client that closed for good is replaced, with how many it replaced so far. */
  onRebuild?: (rebuilds: number) => void;
  /** Least time between two rebuilds, so that a client that closes at once is no busy loop. Default 1000 ms. */
  minRebuildIntervalMs?: number;
}

/**
 * ioredis can end a client for good (status "end") although its retry
 * strategies never give up: a Sentinel client's failover detector that
 * disconnects the connector while it is resolving the new primary makes the
 * connect fail with "Connection is closed.", and a failed connect is never
 * retried. Such a client answers every command with that error forever, so
 * the holder builds a new one in its place (unless `close()` ended it).
 */
export function createRebuildingRedisHolder(
  opts: RebuildingRedisHolderOptions,
): RebuildingRedisHolder {
  const minInterval = opts.minRebuildIntervalMs ?? 1000;
  let closing = false;
  let rebuilds = 0;
  let lastBuilt = 0;
  let timer: NodeJS.Timeout | undefined;
  let client = build();

  function build(): RedisClient {
    const built = opts.create();
    lastBuilt = performance.now();
    built.once("end", () => {
      if (closing || built !== client || timer !== undefined) {
        return;
      }
      const wait = Math.max(0, lastBuilt + minInterval - performance.now());
      timer = setTimeout(() => {
        timer = undefined;
        if (closing) {
          return;
        }
        rebuilds += 1;
        client = build();
        opts.onRebuild?.(rebuilds);
      }, wait);
    });
    opts.onClient?.(built);
    return built;
  }

  return {
    get client() {
      return client;
    },
    close() {
      closing = true;
      clearTimeout(timer);
      client.disconnect();
    },
  };
}
