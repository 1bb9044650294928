// The pairs matter with a Cluster's masters and a Sentinel's failovers, so their
// tests run the token cache (src/store/token-record-cache.ts) over each topology.
// Tested by test/integration/token-cache.test.ts, test/integration/token-cache-topologies.test.ts, test/integration/token-cache-rebuild.test.ts.

import { Cluster, type Redis } from "ioredis";
import { clusterSlotOf } from "./cluster-slot.js";
import {
  createInvalidationPair,
  type InvalidationPair,
  type InvalidationPairEvents,
  type PairLossReason,
} from "./invalidation-pair.js";
import type { RedisClient } from "./redis-client.js";

/** Why reads of earlier epochs stopped being vouched for: a pair's loss, or a Cluster's slot map changing. */
export type InvalidationLossReason = PairLossReason | "topology";

export interface InvalidationPairsEvents extends Omit<InvalidationPairEvents, "lost"> {
  lost(reason: InvalidationLossReason): void;
}

/** One {@link InvalidationPair} per primary the client writes to. */
export interface InvalidationPairs {
  /** The pair of the server holding `key`, whether up or not; undefined when none is known yet. */
  pairOf(key: string): InvalidationPair | undefined;
  /** A pair, or the Cluster client they follow, ended for good: build new pairs. */
  readonly ended: boolean;
  close(): void;
}

export interface InvalidationPairsOptions {
  redis: RedisClient;
  events: InvalidationPairsEvents;
  heartbeatMs?: number;
}

/**
 * Standalone and Sentinel: one pair, made from the client's own options (a
 * Sentinel pair follows the primary as the client does; a failover closes its
 * connections, which the pair reports as lost). Cluster: a pair per master,
 * a key's slot choosing it; when the slot map changes (a slot moved, a
 * failover) every pair's reads are disowned at once.
 */
export function createInvalidationPairs(opts: InvalidationPairsOptions): InvalidationPairs {
  const { redis, events } = opts;
  const pairOptions = (source: Redis) => ({
    source,
    events,
    ...(opts.heartbeatMs === undefined ? {} : { heartbeatMs: opts.heartbeatMs }),
  });
  if (!(redis instanceof Cluster)) {
    const pair = createInvalidationPair(pairOptions(redis));
    return {
      pairOf: () => pair,
      get ended() {
        return pair.ended;
      },
      close: () => pair.close(),
    };
  }
  const cluster = redis;
  const pairs = new Map<string, InvalidationPair>();
  let slotMasters: string[] = [];
  let closed = false;

  function reconcile(): void {
    if (closed) {
      return;
    }
    const masters = cluster.slots.map((nodes) => nodes?.[0] ?? "");
    const changed =
      slotMasters.length > 0 &&
      (masters.length !== slotMasters.length || masters.some((m, i) => m !== slotMasters[i]));
    slotMasters = masters;
    if (changed) {
      events.lost("topology");
    }
    const live = new Set<string>();
    for (const node of cluster.nodes("master")) {
      const name = `${node.options.host}:${node.options.port}`;
      live.add(name);
      if (!pairs.has(name)) {
        pairs.set(name, createInvalidationPair(pairOptions(node)));
      }
    }
    for (const [name, pair] of pairs) {
      if (!live.has(name)) {
        pair.close();
        pairs.delete(name);
      }
    }
  }
  cluster.on("refresh", reconcile);
  cluster.on("ready", reconcile);
  if (cluster.status === "ready") {
    reconcile();
  }
  return {
    pairOf(key) {
      const master = slotMasters[clusterSlotOf(key)];
      return master === undefined ? undefined : pairs.get(master);
    },
    get ended() {
      if (cluster.status === "end") {
        return true;
      }
      for (const pair of pairs.values()) {
        if (pair.ended) {
          return true;
        }
      }
      return false;
    },
    close() {
      closed = true;
      cluster.off("refresh", reconcile);
      cluster.off("ready", reconcile);
      for (const pair of pairs.values()) {
        pair.close();
      }
      pairs.clear();
    },
  };
}
