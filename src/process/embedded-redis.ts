import { resolve } from "node:path";
import {
  RedisBinaryMissingError,
  type RedisServerProcess,
  startRedisServerProcess,
} from "../redis/redis-server-process.js";

// Unix socket paths are limited to about 107 bytes.
const MAX_SOCKET_PATH = 100;

/** Thrown when the embedded default cannot run; the message says what to do. */
export class EmbeddedRedisError extends Error {
  override readonly name = "EmbeddedRedisError";
}

/**
 * The embedded default of `npm start` without a configured Redis: a private
 * redis-server child keeping its data (AOF) in `dir`, on a unix socket there
 * (or a free local port when the path is too long for a socket).
 */
export async function startEmbeddedRedis(
  dir: string,
  freePort: () => Promise<number>,
): Promise<RedisServerProcess> {
  const absolute = resolve(dir);
  try {
    return await startRedisServerProcess({
      dir: absolute,
      port: absolute.length < MAX_SOCKET_PATH ? "unix" : await freePort(),
      appendOnly: true,
    });
  } catch (err) {
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
