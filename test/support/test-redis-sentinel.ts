import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePorts } from "../../src/process/free-port.js";
import {
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../src/redis/redis-server-process.js";
import type { RedisTopology } from "../../src/redis/redis-topology.js";

export interface TestRedisSentinel {
  readonly topology: Extract<RedisTopology, { kind: "sentinel" }>;
  readonly primaryPort: number;
  /** Kills the primary at once (SIGKILL), as a crash would. */
  killPrimary(): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * Waits until the primary's writes are acknowledged by its replica: a replica
 * that has just synced answers its first GETACK only on its 1-second cron.
 */
async function waitForReplicaAcks(primaryPort: number): Promise<void> {
  const client = new Redis({ port: primaryPort, lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    const deadline = Date.now() + 10_000;
    while ((await client.wait(1, 200)) < 1) {
      if (Date.now() > deadline) {
        throw new Error("the replica did not acknowledge writes within 10 s");
      }
    }
  } finally {
    client.disconnect();
  }
}

/**
 * A Sentinel-managed primary with one replica and one sentinel (quorum 1,
 * down after 1 s), all real redis-server processes on free ports.
 */
export async function startTestRedisSentinel(): Promise<TestRedisSentinel> {
  const root = mkdtempSync(join(tmpdir(), "perps-sentinel-"));
  const [primaryPort, replicaPort, sentinelPort] = await freePorts(3);
  const started: RedisServerProcess[] = [];
  // Replicas sync at once (default: 5 s later).
  const syncNow = ["--repl-diskless-sync-delay", "0"];
  const primary = await startRedisServerProcess({
    dir: join(root, "primary"),
    port: primaryPort,
    extraArgs: syncNow,
  });
  started.push(primary);
  started.push(
    await startRedisServerProcess({
      dir: join(root, "replica"),
      port: replicaPort,
      extraArgs: ["--replicaof", "127.0.0.1", String(primaryPort), ...syncNow],
    }),
  );
  await waitForReplicaAcks(primaryPort);
  // Sentinel rewrites its config file, so it gets one of its own.
  const sentinelDir = join(root, "sentinel");
  mkdirSync(sentinelDir);
  const config = join(sentinelDir, "sentinel.conf");
  writeFileSync(
    config,
    [
      `sentinel monitor main 127.0.0.1 ${primaryPort} 1`,
      "sentinel down-after-milliseconds main 1000",
      "sentinel failover-timeout main 5000",
      "",
    ].join("\n"),
  );
  started.push(
    await startRedisServerProcess({
      dir: sentinelDir,
      port: sentinelPort,
      configFile: config,
      extraArgs: ["--sentinel"],
      readyPattern: /\+monitor master/,
    }),
  );
  return {
    topology: {
      kind: "sentinel",
      sentinels: [{ host: "127.0.0.1", port: sentinelPort }],
      name: "main",
    },
    primaryPort,
    async killPrimary() {
      const exited = new Promise((resolve) => primary.child.once("exit", resolve));
      primary.child.kill("SIGKILL");
      await exited;
    },
    async dispose() {
      await Promise.all(started.map((s) => s.stop()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
