import { createBoundedCache } from "../cache/bounded-cache.js";
import type { InvalidationPair } from "../redis/invalidation-pair.js";
import {
  createInvalidationPairs,
  type InvalidationLossReason,
  type InvalidationPairs,
  type InvalidationPairsEvents,
} from "../redis/invalidation-pairs.js";
import type { RedisHolder } from "../redis/redis-holder.js";

/** A token's record as the bearer check needs it (layout 1 records only: they carry their expiry). */
export interface CachedTokenRecord {
  digest: Buffer;
  name: string;
  expiresAtMs: number;
}

/** A record read from Redis, and the way to keep it once the presented token matched it. */
export interface TrackedRead {
  value: Buffer | null;
  /**
   * Keeps the record in memory, unless the read cannot vouch for it any more
   * (read while invalidations were not guaranteed, in an older epoch, or a
   * change of the key came while it was in flight).
   */
  keep(record: CachedTokenRecord): void;
}

/** Told what the cache does: metrics. */
export interface TokenRecordCacheObserver {
  hit(): void;
  miss(): void;
  /** Keys Redis reported changed (entries dropped or not). */
  invalidated(keys: number): void;
  /** The whole cache dropped, and why. */
  dropped(reason: InvalidationLossReason | "flush"): void;
  entries(count: number): void;
  /** From a probe key's change to its invalidation's arrival. */
  lag(seconds: number): void;
}

export interface TokenRecordCache {
  /** The cached record of a token key, if any. */
  get(key: string): CachedTokenRecord | undefined;
  /** Reads a token key: on its server's tracking connection when invalidations are guaranteed, else by `fallback`. */
  read(key: string, fallback: () => Promise<Buffer | null>): Promise<TrackedRead>;
  /** Forgets a key this process changed (and any read of it in flight). */
  forget(key: string): void;
  /** Forgets every key starting with `prefix` (a user's tokens). */
  forgetPrefix(prefix: string): void;
  close(): void;
}

export interface TokenRecordCacheOptions {
  /** The service's client, read anew when pairs are built: a client the holder replaced gets pairs of its own. */
  redis: RedisHolder;
  /** Most records kept. */
  maxEntries: number;
  observer?: TokenRecordCacheObserver;
  /** Subscriber heartbeat (see InvalidationPair). Default 250 ms. */
  heartbeatMs?: number;
  /**
   * Where reads are tracked and invalidations come from. Default: an
   * InvalidationPair per primary of `redis` (the unit tests drive the race
   * logic with their own, to order events deterministically).
   */
  pairs?: (events: InvalidationPairsEvents) => InvalidationPairs;
  /** How often the invalidation lag is probed (a key written, its invalidation timed); 0: never. Default 10000 ms. */
  probeIntervalMs?: number;
}

interface Entry extends CachedTokenRecord {
  pair: InvalidationPair;
  epoch: number;
}

interface Ticket {
  key: string;
  pair: InvalidationPair;
  epoch: number;
  /** A change of the key came while the read was in flight. */
  poisoned: boolean;
  /** Past the tick its reply came in: later invalidations no longer see it. */
  settled: boolean;
}

const NOT_KEPT: TrackedRead["keep"] = () => undefined;

/**
 * Copies digests into slabs that hold only digests. A copy from node's shared
 * 8 KiB pool (Buffer.from) would keep its whole slab alive, with whatever
 * each request allocated beside it: about 300 bytes per cached token, measured.
 */
function createDigestSlabs(slabBytes: number): (digest: Buffer) => Buffer {
  let slab = Buffer.allocUnsafeSlow(slabBytes);
  let used = 0;
  return (digest) => {
    if (used + digest.length > slab.length) {
      slab = Buffer.allocUnsafeSlow(Math.max(slabBytes, digest.length));
      used = 0;
    }
    const copy = slab.subarray(used, used + digest.length);
    digest.copy(copy);
    used += digest.length;
    return copy;
  };
}
const PROBE_PREFIX = "perps:cache-probe:";

/**
 * Token records kept in memory and dropped when Redis says they changed
 * (server-assisted client-side caching: see InvalidationPair). Only reads
 * made on a tracking connection while its pair is up may be kept; an
 * invalidation that overtakes the reply of a read in flight (they come on two
 * sockets) poisons that read; any loss of a pair drops everything.
 */
export function createTokenRecordCache(opts: TokenRecordCacheOptions): TokenRecordCache {
  const observer = opts.observer;
  const entries = createBoundedCache<string, Entry>(opts.maxEntries);
  // A slab is freed once every digest in it is (entries go oldest first).
  const copyDigest = createDigestSlabs(64 * 1024);
  const inFlight = new Map<string, Ticket[]>();
  const probeKey = `${PROBE_PREFIX}${process.pid}:${Math.random().toString(36).slice(2)}`;
  let probeSentAt: number | undefined;

  function poison(key: string): void {
    const tickets = inFlight.get(key);
    if (tickets !== undefined) {
      for (const ticket of tickets) {
        ticket.poisoned = true;
      }
    }
  }
  function dropAll(reason: InvalidationLossReason | "flush"): void {
    entries.clear();
    for (const tickets of inFlight.values()) {
      for (const ticket of tickets) {
        ticket.poisoned = true;
      }
    }
    observer?.dropped(reason);
    observer?.entries(0);
  }
  function settle(ticket: Ticket): void {
    ticket.settled = true;
    const tickets = inFlight.get(ticket.key);
    if (tickets === undefined) {
      return;
    }
    const left = tickets.filter((t) => t !== ticket);
    if (left.length === 0) {
      inFlight.delete(ticket.key);
    } else {
      inFlight.set(ticket.key, left);
    }
  }

  const events: InvalidationPairsEvents = {
    invalidated(keys) {
      if (keys === null) {
        dropAll("flush");
        return;
      }
      let counted = 0;
      for (const raw of keys) {
        const key = raw.toString();
        if (key === probeKey) {
          if (probeSentAt !== undefined) {
            observer?.lag((performance.now() - probeSentAt) / 1000);
            probeSentAt = undefined;
          }
          continue;
        }
        counted += 1;
        entries.delete(key);
        poison(key);
      }
      if (counted > 0) {
        observer?.invalidated(counted);
        observer?.entries(entries.size);
      }
    },
    lost: dropAll,
  };
  const makePairs = (): InvalidationPairs =>
    opts.pairs?.(events) ??
    createInvalidationPairs({
      redis: opts.redis.client,
      events,
      ...(opts.heartbeatMs === undefined ? {} : { heartbeatMs: opts.heartbeatMs }),
    });
  let pairsOf = opts.redis.client;
  let pairs = makePairs();
  let pairsBuilt = performance.now();
  /**
   * The pairs for a read (a miss): built anew, at most once a second, when
   * the service's client was replaced or a pair ended for good, so that the
   * cache does not stay bypassed after ioredis gave up a connection.
   */
  function currentPairs(): InvalidationPairs {
    if (
      opts.pairs === undefined &&
      (pairs.ended || opts.redis.client !== pairsOf) &&
      performance.now() - pairsBuilt >= 1000
    ) {
      pairs.close();
      dropAll("connection");
      pairsOf = opts.redis.client;
      pairs = makePairs();
      pairsBuilt = performance.now();
    }
    return pairs;
  }

  const probeIntervalMs = opts.probeIntervalMs ?? 10_000;
  const probe =
    probeIntervalMs > 0
      ? setInterval(async () => {
          const pair = pairs.pairOf(probeKey);
          if (pair?.up !== true) {
            return;
          }
          try {
            // Tracked by the read, then changed by another connection.
            await pair.read(probeKey);
            probeSentAt = performance.now();
            await opts.redis.client.set(probeKey, String(Date.now()), "PX", probeIntervalMs * 3);
          } catch {
            probeSentAt = undefined;
          }
        }, probeIntervalMs)
      : undefined;
  probe?.unref();

  return {
    get(key) {
      const entry = entries.get(key);
      // An entry outlives no loss (dropAll), but a pair is asked anyway: no
      // hit while its invalidations are not guaranteed.
      if (entry?.pair.up && entry.pair.epoch === entry.epoch) {
        observer?.hit();
        return entry;
      }
      observer?.miss();
      return undefined;
    },

    async read(key, fallback) {
      const pair = currentPairs().pairOf(key);
      if (pair?.up !== true) {
        return { value: await fallback(), keep: NOT_KEPT };
      }
      const ticket: Ticket = { key, pair, epoch: pair.epoch, poisoned: false, settled: false };
      const tickets = inFlight.get(key);
      if (tickets === undefined) {
        inFlight.set(key, [ticket]);
      } else {
        tickets.push(ticket);
      }
      let value: Buffer | null;
      try {
        value = await pair.read(key);
      } finally {
        // Invalidations handled in the same tick as the reply still poison
        // it; keep() runs before this (the check goes on in microtasks).
        setImmediate(() => settle(ticket));
      }
      return {
        value,
        keep(record) {
          if (ticket.poisoned || ticket.settled || !pair.up || pair.epoch !== ticket.epoch) {
            return;
          }
          entries.set(key, {
            digest: copyDigest(record.digest),
            name: record.name,
            expiresAtMs: record.expiresAtMs,
            pair,
            epoch: ticket.epoch,
          });
          observer?.entries(entries.size);
        },
      };
    },

    forget(key) {
      entries.delete(key);
      poison(key);
      observer?.entries(entries.size);
    },

    forgetPrefix(prefix) {
      entries.deleteIf((key) => key.startsWith(prefix));
      for (const key of inFlight.keys()) {
        if (key.startsWith(prefix)) {
          poison(key);
        }
      }
      observer?.entries(entries.size);
    },

    close() {
      if (probe !== undefined) {
        clearInterval(probe);
      }
      pairs.close();
      entries.clear();
    },
  };
}
