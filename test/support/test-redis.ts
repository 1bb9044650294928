import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/process/ports.js";
import {
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../src/redis/redis-server-process.js";
import type { RedisTopology } from "../../src/redis/redis-topology.js";
import { startTestRedisCluster } from "./test-redis-cluster.js";
import { startTestRedisSentinel } from "./test-redis-sentinel.js";

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** What to give the service: this server, or the cluster or Sentinel TEST_REDIS names. */
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
 * TEST_REDIS=cluster, a private 3+3 Redis Cluster (`npm run test:cluster`),
 * or with TEST_REDIS=sentinel a private primary, replica and sentinel
 * (`npm run test:sentinel`), whose stop and restart are a failover's to test
 * (redis-failover.test.ts), not a suite's. Tests never use a shared Redis
 * (such as the one on 6379).
 */
export async function startTestRedis(): Promise<TestRedis> {
  if (process.env.TEST_REDIS === "sentinel") {
    const sentinel = await startTestRedisSentinel();
    const notHere = async () => {
      throw new Error("stop and restart are not offered under TEST_REDIS=sentinel");
    };
    return {
      url: "",
      port: sentinel.primaryPort,
      topology: sentinel.topology,
      stop: notHere,
      restart: notHere,
      dispose: () => sentinel.dispose(),
    };
  }
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

export interface TestRedisServer extends TestRedis {
  /** Kills the server at once (SIGKILL), as a crash would; what its AOF holds stays for `restart`. */
  crash(): Promise<void>;
  /** Freezes the server (SIGSTOP), as a stalled host would: its connections stay open, unanswered. */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
}

export interface TestRedisServerOptions {
  /** More redis-server arguments, e.g. `["--appendfsync", "always"]`. */
  extraArgs?: readonly string[];
}

/** A private redis-server on a free port in a temp folder. */
export async function startTestRedisServer(
  opts: TestRedisServerOptions = {},
): Promise<TestRedisServer> {
  const dir = mkdtempSync(join(tmpdir(), "perps-redis-"));
  const port = await freePort();
  const extraArgs = [...(opts.extraArgs ?? [])];
  const start = () => startRedisServerProcess({ dir, port, appendOnly: true, extraArgs });
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
    async crash() {
      const child = server?.child;
      server = undefined;
      if (child !== undefined && child.exitCode === null && child.signalCode === null) {
        const exited = once(child, "exit");
        child.kill("SIGKILL");
        await exited;
      }
    },
    async restart() {
      server = await start();
    },
    pause() {
      server?.child.kill("SIGSTOP");
    },
    resume() {
      server?.child.kill("SIGCONT");
    },
    async dispose() {
      await server?.stop();
      server = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
