import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePorts } from "../../src/process/ports.js";
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
  /**
   * An operator's planned failover: SENTINEL FAILOVER, sent again while the
   * sentinel refuses it (one in progress, or no replica it deems good yet).
   * Resolves once it is accepted, with the primary's port then; `switched`
   * waits until the sentinel names the promoted replica and resolves with its
   * port; `settle` readies the next one (`switched` first).
   */
  plannedFailover(): Promise<{
    from: number;
    switched: () => Promise<number>;
    settle: () => Promise<void>;
  }>;
  dispose(): Promise<void>;
}

export interface TestRedisSentinelOptions {
  /** Sentinels watching the primary (quorum: a majority). Default 1. */
  sentinels?: number;
  /** Replicas of the primary: 1, or 0 for a Sentinel with none to fail over to. Default 1. */
  replicas?: 0 | 1;
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
 * A Sentinel-managed primary with one replica (or none) and one sentinel or
 * more (quorum a majority, down after 1 s), all real redis-server processes
 * on free ports.
 */
// A sentinel starts no new failover of a primary name within twice this
// (from a start it may delay by up to a second).
const FAILOVER_TIMEOUT_MS = 3000;

export async function startTestRedisSentinel(
  opts: TestRedisSentinelOptions = {},
): Promise<TestRedisSentinel> {
  const root = mkdtempSync(join(tmpdir(), "perps-sentinel-"));
  const sentinelCount = opts.sentinels ?? 1;
  const [primaryPort = 0, replicaPort = 0, ...sentinelPorts] = await freePorts(2 + sentinelCount);
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
  if (opts.replicas !== 0) {
    const replica = await startRedisServerProcess({
      dir: join(root, "replica"),
      port: replicaPort,
      extraArgs: ["--replicaof", "127.0.0.1", String(primaryPort), ...syncNow],
    });
    started.push(replica);
    servers.set(replicaPort, replica);
    await waitForReplicaAcks(primaryPort);
  }
  const quorum = Math.floor(sentinelCount / 2) + 1;
  for (const [i, port] of sentinelPorts.entries()) {
    // Sentinel rewrites its config file, so each gets one of its own.
    const sentinelDir = join(root, `sentinel-${i}`);
    mkdirSync(sentinelDir);
    const config = join(sentinelDir, "sentinel.conf");
    writeFileSync(
      config,
      [
        `sentinel monitor main 127.0.0.1 ${primaryPort} ${quorum}`,
        "sentinel down-after-milliseconds main 1000",
        `sentinel failover-timeout main ${FAILOVER_TIMEOUT_MS}`,
        "",
      ].join("\n"),
    );
    started.push(
      await startRedisServerProcess({
        dir: sentinelDir,
        port,
        configFile: config,
        extraArgs: ["--sentinel"],
        readyPattern: /\+monitor master/,
      }),
    );
  }
  const sentinelPort = sentinelPorts[0] ?? 0;
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
  // The next failover needs the sentinel to see the replica as healthy (its
  // own INFO of it, which may take up to 10 s).
  const sentinelSeesReplica = (port: number, of: number) =>
    until("the sentinel sees the replica", async () => {
      const replicas = (await sentinelClient.call("SENTINEL", "replicas", "main")) as string[][];
      return replicas.some((fields) => {
        const info = new Map<string, string>();
        for (let i = 0; i + 1 < fields.length; i += 2) {
          info.set(fields[i] ?? "", fields[i + 1] ?? "");
        }
        return (
          info.get("port") === String(port) &&
          info.get("flags") === "slave" &&
          info.get("master-link-status") === "ok" &&
          info.get("master-port") === String(of)
        );
      });
    });
  // A failover needs the sentinels to know each other (their hello messages).
  await until("the sentinels know each other", async () => {
    const others = (await sentinelClient.call("SENTINEL", "sentinels", "main")) as unknown[];
    return others.length === sentinelCount - 1;
  });
  return {
    topology: {
      kind: "sentinel",
      sentinels: sentinelPorts.map((port) => ({ host: "127.0.0.1", port })),
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
        await sentinelSeesReplica(killedPort, promoted);
      };
      return { killedAt, rejoin };
    },
    async plannedFailover() {
      const from = await currentPrimary();
      await until("SENTINEL FAILOVER accepted", async () => {
        try {
          await sentinelClient.call("SENTINEL", "FAILOVER", "main");
          return true;
        } catch (err) {
          if (/NOGOODSLAVE|INPROG/.test(String(err))) {
            return false;
          }
          throw err;
        }
      });
      let to = from;
      const switched = async () => {
        await until("the sentinel names the promoted replica", async () => {
          to = await currentPrimary();
          return to !== from;
        });
        return to;
      };
      const settle = async () => {
        // What the sentinel does too, 8 to 18 s later (+convert-to-slave):
        // the old primary, still a primary, becomes the new one's replica and
        // syncs from it, losing every write it took since the promotion.
        const old = new Redis({ port: from, maxRetriesPerRequest: 0 });
        try {
          await old.call("REPLICAOF", "127.0.0.1", String(to));
        } finally {
          old.disconnect();
        }
        await waitForReplicaAcks(to);
        await sentinelSeesReplica(from, to);
      };
      return { from, switched, settle };
    },
    async dispose() {
      sentinelClient.disconnect();
      await Promise.all(started.map((s) => s.stop()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
