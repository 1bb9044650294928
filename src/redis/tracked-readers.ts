// One tracked reader per primary the client writes to, and below them the
// cluster slot of a key, by which a Cluster's key finds its master's pair.
// The pairs matter with a Cluster's masters and a Sentinel's failovers, so their
// tests run the token cache (src/store/token-record-cache.ts) over each topology.
// Tested by test/integration/token-cache.test.ts, test/integration/token-cache-topologies.test.ts, test/integration/token-cache-rebuild.test.ts.

import { Cluster, type Redis } from "ioredis";
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

// The cluster slot of a key.

// CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with.
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    }
    table[i] = crc & 0xffff;
  }
  return table;
})();

function crc16(bytes: Buffer, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ (bytes[i] ?? 0)) & 0xff] ?? 0);
  }
  return crc;
}

/**
 * The cluster slot of a key (0–16383), as `CLUSTER KEYSLOT` computes it: of
 * the hash tag (`{…}`, first `{` to the next `}`, when not empty), else of
 * the whole key. ioredis exports nothing public for it.
 */
export function clusterSlotOf(key: string): number {
  const bytes = Buffer.from(key);
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) {
      return crc16(bytes, open + 1, close) & 16383;
    }
  }
  return crc16(bytes, 0, bytes.length) & 16383;
}
