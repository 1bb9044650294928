import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/process/free-port.js";
import {
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../src/redis/redis-server-process.js";

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** Stops the server; its data (AOF) stays for `restart`. */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder. */
  restart(): Promise<void>;
  /** Stops it and removes its folder. */
  dispose(): Promise<void>;
}

/**
 * A private redis-server on a free port in a temp folder: tests never use a
 * shared Redis (such as the one on 6379).
 */
export async function startTestRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), "perps-redis-"));
  const port = await freePort();
  const start = () => startRedisServerProcess({ dir, port, appendOnly: true });
  let server: RedisServerProcess | undefined = await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await server?.stop();
      server = undefined;
    },
    async restart() {
      server = await start();
    },
    async dispose() {
      await server?.stop();
      server = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
