import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { freePorts } from "../../src/process/ports.js";
import {
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../src/redis/redis-server-process.js";
import type { RedisTopology } from "../../src/redis/redis-topology.js";

const run = promisify(execFile);

export interface ClusterNode {
  readonly port: number;
  readonly dir: string;
  process: RedisServerProcess | undefined;
}

export interface TestRedisCluster {
  readonly nodes: readonly ClusterNode[];
  /** Seeds for the service: every node. */
  readonly topology: Extract<RedisTopology, { kind: "cluster" }>;
  /** The port of the primary that serves `key`'s slot now. */
  primaryPortOf(key: string): Promise<number>;
  /** The ports of the primaries serving slots now. */
  primaryPorts(): Promise<number[]>;
  /**
   * Moves `key`'s slot, with every key in it, to the primary on `toPort`, as
   * a resharding does: IMPORTING and MIGRATING, MIGRATE, then the slot given
   * to its new owner on every primary. `whileMoving` runs once the keys have
   * moved and before the slot has (the old owner then answers ASK).
   */
  moveSlotOf(key: string, toPort: number, whileMoving?: () => Promise<void>): Promise<void>;
  /** Kills a node at once (SIGKILL), as a crash would. */
  kill(port: number): Promise<void>;
  /** Starts a killed node again with its data and cluster config. */
  restart(port: number): Promise<void>;
  /** Stops every node (a whole-cluster outage); data and cluster config stay. */
  stopAll(): Promise<void>;
  /** Starts every stopped node again and waits until the cluster is healthy. */
  startAll(): Promise<void>;
  /** Resolves when every running node reports the cluster ok, all slots served and every replica in sync. */
  waitUntilHealthy(timeoutMs: number): Promise<void>;
  dispose(): Promise<void>;
}

export interface TestRedisClusterOptions {
  /** Default 3. */
  primaries?: number;
  /** Default 1 (so 3 primaries and 3 replicas). */
  replicasPerPrimary?: number;
  /** cluster-node-timeout: how soon a silent primary is failed over. Default 1000 ms. */
  nodeTimeoutMs?: number;
}

/** CLUSTER INFO and INFO replication of one node, as text. */
async function nodeInfo(port: number): Promise<string> {
  const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    return `${await client.call("CLUSTER", "INFO")}\n${await client.info("replication")}`;
  } finally {
    client.disconnect();
  }
}

function healthy(info: string): boolean {
  const replicaSynced = !info.includes("role:slave") || info.includes("master_link_status:up");
  return (
    info.includes("cluster_state:ok") && info.includes("cluster_slots_ok:16384") && replicaSynced
  );
}

/**
 * A real Redis Cluster of `redis-server --cluster-enabled yes` processes on
 * free ports in a temp folder, created with `redis-cli --cluster create`.
 */
export async function startTestRedisCluster(
  opts: TestRedisClusterOptions = {},
): Promise<TestRedisCluster> {
  const primaries = opts.primaries ?? 3;
  const replicas = opts.replicasPerPrimary ?? 1;
  const root = mkdtempSync(join(tmpdir(), "perps-cluster-"));
  const count = primaries * (1 + replicas);
  // Client and bus ports all distinct: picked one by one, two could be the same.
  const ports = await freePorts(2 * count);
  const nodes: ClusterNode[] = [];
  const busPorts = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const port = ports[i] ?? 0;
    nodes.push({ port, dir: join(root, `node-${i}`), process: undefined });
    busPorts.set(port, ports[count + i] ?? 0);
  }
  const start = async (node: ClusterNode) => {
    node.process = await startRedisServerProcess({
      dir: node.dir,
      port: node.port,
      appendOnly: true,
      extraArgs: [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        String(opts.nodeTimeoutMs ?? 1000),
        "--cluster-port",
        String(busPorts.get(node.port)),
        // Other slots keep serving while one primary is failed over.
        "--cluster-require-full-coverage",
        "no",
        // Replicas sync at once (default: 5 s later); a replica that never
        // synced cannot take over from its primary.
        "--repl-diskless-sync-delay",
        "0",
      ],
    });
  };
  const starts = await Promise.allSettled(nodes.map(start));
  const failed = starts.find((result) => result.status === "rejected");
  if (failed !== undefined) {
    // Those that did start must not outlive the test that could not use them.
    await Promise.all(nodes.map((node) => node.process?.stop()));
    rmSync(root, { recursive: true, force: true });
    throw failed.reason;
  }

  /** Runs `use` on a connection of its own to the node on `port`. */
  const onNode = async <T>(port: number, use: (client: Redis) => Promise<T>): Promise<T> => {
    const client = new Redis({
      port,
      host: "127.0.0.1",
      lazyConnect: true,
      maxRetriesPerRequest: 0,
    });
    try {
      await client.connect();
      return await use(client);
    } finally {
      client.disconnect();
    }
  };

  const findNode = (port: number) => {
    const node = nodes.find((n) => n.port === port);
    if (node === undefined) {
      throw new Error(`no cluster node on port ${port}`);
    }
    return node;
  };

  const cluster: TestRedisCluster = {
    nodes,
    topology: {
      kind: "cluster",
      nodes: nodes.map((n) => ({ host: "127.0.0.1", port: n.port })),
    },
    async primaryPortOf(key) {
      for (const node of nodes.filter((n) => n.process !== undefined)) {
        const client = new Redis({ port: node.port, lazyConnect: true, maxRetriesPerRequest: 0 });
        try {
          await client.connect();
          const slot = Number(await client.call("CLUSTER", "KEYSLOT", key));
          const ranges = (await client.call("CLUSTER", "SLOTS")) as [
            number,
            number,
            [string, number],
          ][];
          const range = ranges.find(([from, to]) => slot >= from && slot <= to);
          if (range !== undefined) {
            return range[2][1];
          }
        } catch {
          // Ask the next node.
        } finally {
          client.disconnect();
        }
      }
      throw new Error(`no node knows the primary of ${key}`);
    },
    async primaryPorts() {
      const text = await onNode(nodes[0]?.port ?? 0, (client) => client.call("CLUSTER", "NODES"));
      return String(text)
        .split("\n")
        .map((line) => line.split(" "))
        .filter((fields) => fields[2]?.includes("master") === true && fields.length > 8)
        .map((fields) => Number(fields[1]?.split(":")[1]?.split("@")[0]));
    },
    async moveSlotOf(key, toPort, whileMoving) {
      const fromPort = await cluster.primaryPortOf(key);
      const slot = String(
        await onNode(fromPort, (client) => client.call("CLUSTER", "KEYSLOT", key)),
      );
      const idOf = (port: number) =>
        onNode(port, async (client) => String(await client.call("CLUSTER", "MYID")));
      const [fromId, toId] = [await idOf(fromPort), await idOf(toPort)];
      await onNode(toPort, (client) =>
        client.call("CLUSTER", "SETSLOT", slot, "IMPORTING", fromId),
      );
      await onNode(fromPort, async (client) => {
        await client.call("CLUSTER", "SETSLOT", slot, "MIGRATING", toId);
        const keys = (await client.call("CLUSTER", "GETKEYSINSLOT", slot, "1000")) as string[];
        if (keys.length > 0) {
          await client.call(
            "MIGRATE",
            "127.0.0.1",
            String(toPort),
            "",
            "0",
            "5000",
            "KEYS",
            ...keys,
          );
        }
      });
      await whileMoving?.();
      for (const port of [toPort, fromPort, ...(await cluster.primaryPorts())]) {
        await onNode(port, (client) => client.call("CLUSTER", "SETSLOT", slot, "NODE", toId));
      }
    },
    async kill(port) {
      const node = findNode(port);
      const child = node.process?.child;
      if (child !== undefined && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
      }
      node.process = undefined;
    },
    async restart(port) {
      await start(findNode(port));
    },
    async stopAll() {
      await Promise.all(nodes.map((n) => n.process?.stop()));
      for (const node of nodes) {
        node.process = undefined;
      }
    },
    async startAll() {
      await Promise.all(nodes.filter((n) => n.process === undefined).map(start));
      await cluster.waitUntilHealthy(20_000);
    },
    async waitUntilHealthy(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const infos = await Promise.all(
          nodes.filter((n) => n.process !== undefined).map((n) => nodeInfo(n.port).catch(() => "")),
        );
        if (infos.every(healthy)) {
          return;
        }
        if (Date.now() > deadline) {
          throw new Error(`cluster not healthy within ${timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async dispose() {
      await Promise.all(nodes.map((n) => n.process?.stop()));
      rmSync(root, { recursive: true, force: true });
    },
  };

  try {
    await run("redis-cli", [
      "--cluster",
      "create",
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      "--cluster-replicas",
      String(replicas),
      "--cluster-yes",
    ]);
    await cluster.waitUntilHealthy(20_000);
  } catch (err) {
    await cluster.dispose();
    throw err;
  }
  return cluster;
}
