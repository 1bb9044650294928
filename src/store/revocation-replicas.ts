/**
 * How many replicas a revocation (a delete, an operator's revoke, a key's
 * removal) waits for. Replication is asynchronous: a primary that is failed
 * over loses what its replica had not received, and a lost create only costs
 * its caller a retry while a lost revocation brings a token back to life. So
 * where the topology has replicas to fail over to, a revocation is
 * acknowledged only once one confirmed it. Below the rule, the census that
 * follows whether the primaries have replicas.
 *
 * Tested by test/unit/store/revocation-replicas.test.ts, test/unit/store/revocation-replicas-census.test.ts, test/integration/revocation-failover.test.ts.
 */

import { Cluster } from "ioredis";
import type { RevokeReplicasAck } from "../config/config.js";
import type { RedisHolder } from "../redis/redis-holder.js";
import type { RedisTopology } from "../redis/redis-topology.js";

export interface RevocationReplicasOptions {
  /** REDIS_REVOKE_REPLICAS_ACK, as the config parsed it. */
  revokeReplicasAck: RevokeReplicasAck;
  /** REDIS_MIN_REPLICAS_ACK: what every write waits for; a revocation never waits for fewer. */
  minReplicasAck: number;
  /**
   * Whether the primaries were seen with a replica (startReplicaCensus, below);
   * undefined while nobody knows yet, which counts as yes: a revocation is
   * never acknowledged unconfirmed on a guess.
   */
  hasReplicas: boolean | undefined;
}

/** Replicas that must confirm a revocation now. */
export function revocationReplicas(opts: RevocationReplicasOptions): number {
  const setting = opts.revokeReplicasAck;
  const own = setting === "auto" ? (opts.hasReplicas === false ? 0 : 1) : setting;
  return Math.max(own, opts.minReplicasAck);
}

/** Whether revocations may ever wait for a replica (they then need wait lanes). */
export function revocationsMayWait(
  kind: RedisTopology["kind"],
  opts: Omit<RevocationReplicasOptions, "hasReplicas">,
): boolean {
  return (
    revocationReplicas({ ...opts, hasReplicas: replicasLookedFor(kind) ? undefined : false }) > 0
  );
}

/** How many replicas a revocation waits for, now. */
export interface RevocationReplicas {
  current(): number;
  close(): void;
}

/**
 * Follows whether the topology has replicas (the census below) and answers
 * for each revocation how many must confirm it.
 */
export function followRevocationReplicas(
  kind: RedisTopology["kind"],
  redis: RedisHolder,
  opts: Omit<RevocationReplicasOptions, "hasReplicas">,
): RevocationReplicas {
  const census = startReplicaCensus({ kind, redis });
  return {
    current: () => revocationReplicas({ ...opts, hasReplicas: census.hasReplicas }),
    close: () => census.close(),
  };
}

// The census of replicas.

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

/**
 * Whether the service's primaries have replicas: what "auto" durability of
 * revocations follows (above). Asked where the topology is built to fail
 * over to a replica (Sentinel: the primary's INFO replication; Cluster:
 * CLUSTER NODES, replicas failed or not), at start and again until one is
 * seen. Once seen it stays seen: in a failover the old primary has just lost
 * its replica, and that is the very moment a revocation must not be
 * acknowledged unconfirmed.
 */
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
