// The pairs matter with a Cluster's masters and a Sentinel's failovers, so their
// tests run the token cache (src/store/token-record-cache.ts) over each topology.
// Tested by test/integration/token-cache.test.ts, test/integration/token-cache-topologies.test.ts, test/integration/token-cache-rebuild.test.ts.

import { Cluster, type Redis } from "ioredis";
import { clusterSlotOf } from "./cluster-slot.js";
import type { RedisClient } from "./redis-client.js";
import {
  createTrackedReader,
  type TrackedReader,
  type TrackedReaderEvents,
  type TrackingLossReason,
} from "./tracked-reader.js";

/** Why reads of earlier epochs stopped being vouched for: a pair's loss, or a Cluster's slot map changing. */
export type InvalidationLossReason = TrackingLossReason | "topology";

export interface TrackedReadersEvents extends Omit<TrackedReaderEvents, "lost"> {
  lost(reason: InvalidationLossReason): void;
}

/** One {@link TrackedReader} per primary the client writes to. */
export interface TrackedReaders {
  /** The pair of the server holding `key`, whether up or not; undefined when none is known yet. */
  pairOf(key: string): TrackedReader | undefined;
  /** A pair, or the Cluster client they follow, ended for good: build new pairs. */
  readonly ended: boolean;
  close(): void;
}

export interface TrackedReadersOptions {
  redis: RedisClient;
  events: TrackedReadersEvents;
  heartbeatMs?: number;
}

/**
 * Standalone and Sentinel: one pair, made from the client's own options (a
 * Sentinel pair follows the primary as the client does; a failover closes its
 * connections, which the pair reports as lost). Cluster: a pair per master,
 * a key's slot choosing it; when the slot map changes (a slot moved, a
 * failover) every pair's reads are disowned at once.
 */
export function createTrackedReaders(opts: TrackedReadersOptions): TrackedReaders {
  const { redis, events } = opts;
  const pairOptions = (source: Redis) => ({
    source,
    events,
    ...(opts.heartbeatMs === undefined ? {} : { heartbeatMs: opts.heartbeatMs }),
  });
  if (!(redis instanceof Cluster)) {
    const pair = createTrackedReader(pairOptions(redis));
    return {
      pairOf: () => pair,
      get ended() {
        return pair.ended;
      },
      close: () => pair.close(),
    };
  }
  const cluster = redis;
  const pairs = new Map<string, TrackedReader>();
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
        pairs.set(name, createTrackedReader(pairOptions(node)));
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
