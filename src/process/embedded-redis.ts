// The redis-server child of `npm start` without a configured Redis: only a
// whole start shows it serving, keeping its data and stopping with the service.
// Tested by test/integration/start.test.ts, test/integration/redis-persistence.test.ts.

import { join, resolve } from "node:path";
import {
  RedisBinaryMissingError,
  type RedisServerProcess,
  startRedisServerProcess,
} from "../redis/redis-server-process.js";
import { type StaleRedis, StaleRedisError, stopStaleRedis } from "./stale-redis.js";

// Unix socket paths are limited to about 107 bytes.
const MAX_SOCKET_PATH = 100;

/** Thrown when the embedded default cannot run; the message says what to do. */
export class EmbeddedRedisError extends Error {
  override readonly name = "EmbeddedRedisError";
}

export interface EmbeddedRedis {
  server: RedisServerProcess;
  /** A server an earlier run left on the same folder, stopped before this one started. */
  stale: StaleRedis;
}

/**
 * The embedded default of `npm start` without a configured Redis: a private
 * redis-server child keeping its data (AOF) in `dir`, on a unix socket there
 * (or a free local port when the path is too long for a socket). It exits
 * with this process, and a server an earlier run left on `dir` is stopped
 * first, only when proven an orphan (stopStaleRedis): `lockHeld` says this
 * process still holds the folder's instance lock.
 */
export async function startEmbeddedRedis(
  dir: string,
  freePort: () => Promise<number>,
  lockHeld: () => boolean,
): Promise<EmbeddedRedis> {
  const absolute = resolve(dir);
  const socket = join(absolute, "redis.sock");
  const pidFile = join(absolute, "redis.pid");
  try {
    const stale = await stopStaleRedis({ dir: absolute, socket, pidFile, lockHeld });
    const server = await startRedisServerProcess({
      dir: absolute,
      port: socket.length < MAX_SOCKET_PATH ? "unix" : await freePort(),
      appendOnly: true,
      extraArgs: ["--pidfile", pidFile],
      exitWithParent: true,
    });
    return { server, stale };
  } catch (err) {
    if (err instanceof StaleRedisError) {
      throw new EmbeddedRedisError(
        `${err.message}; stop it (or the other service), then start again.`,
        { cause: err },
      );
    }
    if (err instanceof RedisBinaryMissingError) {
      throw new EmbeddedRedisError(
        "No redis-server binary on PATH. Install one (e.g. `apt-get install redis-server`, " +
          "`brew install redis`) or set REDIS_URL to a running Redis.",
        { cause: err },
      );
    }
    throw err;
  }
}
