import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/process/free-port.js";
import {
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../src/redis/redis-server-process.js";
import type { RedisTopology } from "../../src/redis/redis-topology.js";
import { startTestRedisCluster } from "./test-redis-cluster.js";

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** What to give the service: this server, or the cluster under TEST_REDIS=cluster. */
  readonly topology: RedisTopology;
  /** Stops the server; its data (AOF) stays for `restart`. */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder. */
  restart(): Promise<void>;
  /** Stops it and removes its folder. */
  dispose(): Promise<void>;
}

/**
 * The Redis a contract suite runs against: a private redis-server, or, with
 * TEST_REDIS=cluster, a private 3+3 Redis Cluster (`npm run test:cluster`).
 * Tests never use a shared Redis (such as the one on 6379).
 */
export async function startTestRedis(): Promise<TestRedis> {
  if (process.env.TEST_REDIS === "cluster") {
    const cluster = await startTestRedisCluster();
    return {
      url: "",
      port: 0,
      topology: cluster.topology,
      stop: () => cluster.stopAll(),
      restart: () => cluster.startAll(),
      dispose: () => cluster.dispose(),
    };
  }
  return startTestRedisServer();
}

/** A private redis-server on a free port in a temp folder. */
export async function startTestRedisServer(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), "perps-redis-"));
  const port = await freePort();
  const start = () => startRedisServerProcess({ dir, port, appendOnly: true });
  let server: RedisServerProcess | undefined = await start();
  const url = `redis://127.0.0.1:${port}`;
  return {
    url,
    port,
    topology: { kind: "url", url },
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
