/**
 * Whether the service's primaries have replicas: what "auto" durability of
 * revocations follows (src/store/revocation-replicas.ts). Asked where the
 * topology is built to fail over to a replica (Sentinel: the primary's INFO
 * replication; Cluster: CLUSTER NODES, replicas failed or not), at start and
 * again until one is seen. Once seen it stays seen: in a failover the old
 * primary has just lost its replica, and that is the very moment a
 * revocation must not be acknowledged unconfirmed.
 *
 * Tested by test/unit/redis/replica-census.test.ts, test/integration/revocation-failover.test.ts.
 */

import { Cluster } from "ioredis";
import type { RedisHolder } from "./redis-holder.js";
import type { RedisTopology } from "./redis-topology.js";

export interface ReplicaCensus {
  /** True once a primary was seen with a replica; false while none was; undefined before the first answer. */
  readonly hasReplicas: boolean | undefined;
  close(): void;
}

export interface ReplicaCensusOptions {
  kind: RedisTopology["kind"];
  /** The service's client (read anew each time: the holder may replace it). */
  redis: RedisHolder;
  /** How often to ask again while no replica was seen. Default 5000 ms. */
  intervalMs?: number;
}

/**
 * Whether replicas are looked for in this topology: Sentinel and Cluster, the
 * shapes built to fail over to one. A server named by one URL or socket is
 * taken for a single node (nothing the service knows of promotes a replica
 * behind it).
 */
export function replicasLookedFor(kind: RedisTopology["kind"]): boolean {
  return kind === "sentinel" || kind === "cluster";
}

export function startReplicaCensus(opts: ReplicaCensusOptions): ReplicaCensus {
  if (!replicasLookedFor(opts.kind)) {
    return { hasReplicas: false, close: () => undefined };
  }
  let hasReplicas: boolean | undefined;
  let closed = false;
  const ask = async (): Promise<void> => {
    const client = opts.redis.client;
    if (client instanceof Cluster) {
      // CLUSTER NODES, not the slot map: CLUSTER SLOTS leaves out a replica
      // that has no replication offset yet (a cluster that took no write).
      const nodes = String(await client.call("CLUSTER", "NODES"));
      hasReplicas = nodes.split("\n").some((line) => /\bslave\b/.test(line.split(" ")[2] ?? ""));
      return;
    }
    const info = await client.info("replication");
    hasReplicas = Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0) > 0;
  };
  const timer = setInterval(() => {
    if (hasReplicas === true) {
      clearInterval(timer);
      return;
    }
    // Unanswered (Redis away): asked again at the next tick.
    ask().catch(() => undefined);
  }, opts.intervalMs ?? 5000);
  timer.unref();
  const first = (): void => {
    if (!closed) {
      ask().catch(() => undefined);
    }
  };
  opts.redis.client.once("ready", first);
  if (opts.redis.client.status === "ready") {
    first();
  }
  return {
    get hasReplicas() {
      return hasReplicas;
    },
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}
