import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "../src/process/ports.js";
import { startRedisServerProcess } from "../src/redis/redis-server-process.js";

export interface BenchRedis {
  readonly url: string;
  /** A plain client for the benchmark's own commands (INFO, seeding). */
  readonly client: Redis;
  readonly pid: number;
  stop(): Promise<void>;
}

/** A private redis-server (no persistence) in a temp folder, with a client. */
export async function startBenchRedis(): Promise<BenchRedis> {
  const dir = mkdtempSync(join(tmpdir(), "perps-bench-redis-"));
  const port = await freePort();
  const server = await startRedisServerProcess({ dir, port });
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url);
  return {
    url,
    client,
    pid: server.child.pid ?? 0,
    async stop() {
      client.disconnect();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
