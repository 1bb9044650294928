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
  /** The port of the server the sentinel names primary now. */
  currentPrimaryPort(): Promise<number>;
  /**
   * One failover: kills the current primary (SIGKILL) and resolves with when.
   * `rejoin` readies the next one: it waits until the sentinel names the
   * promoted replica, restarts the killed server as that one's replica and
   * waits until it is synced and the sentinel counts it as a healthy replica.
   */
  failOver(): Promise<{ killedAt: number; rejoin: () => Promise<void> }>;
  dispose(): Promise<void>;
}

/**
 * Waits until the primary's writes are acknowledged by its replica: a replica
 * that has just synced answers its first GETACK only on its 1-second cron.
 * Each round writes first, as WAIT with no write of the client's own counts
 * any replica that ever acknowledged.
 */
export async function waitForReplicaAcks(primaryPort: number): Promise<void> {
  const client = new Redis({ port: primaryPort, lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    const deadline = Date.now() + 10_000;
    const acked = async () => {
      const replies = await client.pipeline().incr("test:replica-ack-probe").wait(1, 200).exec();
      return Number(replies?.[1]?.[1]) >= 1;
    };
    while (!(await acked())) {
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
// A sentinel starts no new failover of a primary name within twice this
// (from a start it may delay by up to a second).
const FAILOVER_TIMEOUT_MS = 3000;

export async function startTestRedisSentinel(): Promise<TestRedisSentinel> {
  const root = mkdtempSync(join(tmpdir(), "perps-sentinel-"));
  const [primaryPort, replicaPort, sentinelPort] = await freePorts(3);
  const started: RedisServerProcess[] = [];
  // The data servers by port; a failover restarts one.
  const servers = new Map<number, RedisServerProcess>();
  // Replicas sync at once (default: 5 s later).
  const syncNow = ["--repl-diskless-sync-delay", "0"];
  const primary = await startRedisServerProcess({
    dir: join(root, "primary"),
    port: primaryPort,
    extraArgs: syncNow,
  });
  started.push(primary);
  servers.set(primaryPort, primary);
  const replica = await startRedisServerProcess({
    dir: join(root, "replica"),
    port: replicaPort,
    extraArgs: ["--replicaof", "127.0.0.1", String(primaryPort), ...syncNow],
  });
  started.push(replica);
  servers.set(replicaPort, replica);
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
      `sentinel failover-timeout main ${FAILOVER_TIMEOUT_MS}`,
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
  const sentinelClient = new Redis({ port: sentinelPort, maxRetriesPerRequest: 0 });
  const currentPrimary = async () =>
    Number(
      ((await sentinelClient.call("SENTINEL", "get-master-addr-by-name", "main")) as string[])[1],
    );
  let lastKill = 0;
  const until = async (what: string, check: () => Promise<boolean>) => {
    const deadline = Date.now() + 30_000;
    while (!(await check())) {
      if (Date.now() > deadline) {
        throw new Error(`${what}: not within 30 s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return {
    topology: {
      kind: "sentinel",
      sentinels: [{ host: "127.0.0.1", port: sentinelPort }],
      name: "main",
    },
    primaryPort,
    currentPrimaryPort: currentPrimary,
    async killPrimary() {
      const exited = new Promise((resolve) => primary.child.once("exit", resolve));
      primary.child.kill("SIGKILL");
      await exited;
    },
    async failOver() {
      const killedPort = await currentPrimary();
      const killed = servers.get(killedPort);
      if (killed === undefined) {
        throw new Error(`the sentinel names an unknown primary :${killedPort}`);
      }
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, lastKill + 2 * FAILOVER_TIMEOUT_MS + 3000 - Date.now())),
      );
      const exited = new Promise((resolve) => killed.child.once("exit", resolve));
      killed.child.kill("SIGKILL");
      lastKill = Date.now();
      await exited;
      const killedAt = Date.now();
      const rejoin = async () => {
        let promoted = killedPort;
        await until("a replica promoted", async () => {
          promoted = await currentPrimary();
          return promoted !== killedPort;
        });
        const rejoined = await startRedisServerProcess({
          dir: join(root, killedPort === primaryPort ? "primary" : "replica"),
          port: killedPort,
          extraArgs: ["--replicaof", "127.0.0.1", String(promoted), ...syncNow],
        });
        started.push(rejoined);
        servers.set(killedPort, rejoined);
        await waitForReplicaAcks(promoted);
        // The next failover needs the sentinel to see the replica as healthy
        // (its own INFO of it, which may take up to 10 s).
        await until("the sentinel sees the rejoined replica", async () => {
          const replicas = (await sentinelClient.call(
            "SENTINEL",
            "replicas",
            "main",
          )) as string[][];
          return replicas.some((fields) => {
            const info = new Map<string, string>();
            for (let i = 0; i + 1 < fields.length; i += 2) {
              info.set(fields[i] ?? "", fields[i + 1] ?? "");
            }
            return (
              info.get("port") === String(killedPort) &&
              info.get("flags") === "slave" &&
              info.get("master-link-status") === "ok" &&
              info.get("master-port") === String(promoted)
            );
          });
        });
      };
      return { killedAt, rejoin };
    },
    async dispose() {
      sentinelClient.disconnect();
      await Promise.all(started.map((s) => s.stop()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
