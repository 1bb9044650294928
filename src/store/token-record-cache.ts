import { createBoundedCache } from "../cache/bounded-cache.js";
import { isClusterRedirect } from "../redis/redis-failure.js";
import type { RedisHolder } from "../redis/redis-holder.js";
import type { TrackedReader } from "../redis/tracked-reader.js";
import {
  createTrackedReaders,
  type InvalidationLossReason,
  type TrackedReaders,
  type TrackedReadersEvents,
} from "../redis/tracked-readers.js";
import { createDigestSlabs } from "./digest-slabs.js";
import { createInFlightReads } from "./in-flight-reads.js";
import { startInvalidationLagProbe } from "./invalidation-lag-probe.js";

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
  /** The whole cache dropped: why, and how many records it held. */
  dropped(reason: InvalidationLossReason | "flush", entries: number): void;
  entries(count: number): void;
  /** From a probe key's change to its invalidation's arrival. */
  lag(seconds: number): void;
}

export interface TokenRecordCache {
  /** The cached record of a token key, if any. */
  get(key: string): CachedTokenRecord | undefined;
  /**
   * `get` counting a hit only: the check lane asks first, and leaves a miss
   * to the lookup, which counts it.
   */
  find(key: string): CachedTokenRecord | undefined;
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
  /** Subscriber heartbeat (see TrackedReader). Default 250 ms. */
  heartbeatMs?: number;
  /**
   * Where reads are tracked and invalidations come from. Default: an
   * TrackedReader per primary of `redis` (the unit tests drive the race
   * logic with their own, to order events deterministically).
   */
  pairs?: (events: TrackedReadersEvents) => TrackedReaders;
  /** How often the invalidation lag is probed (a key written, its invalidation timed); 0: never. Default 10000 ms. */
  probeIntervalMs?: number;
}

interface Entry extends CachedTokenRecord {
  pair: TrackedReader;
  epoch: number;
}

const NOT_KEPT: TrackedRead["keep"] = () => undefined;

/**
 * Token records kept in memory and dropped when Redis says they changed
 * (server-assisted client-side caching: see TrackedReader). Only reads
 * made on a tracking connection while its pair is up may be kept; an
 * invalidation that overtakes the reply of a read in flight (they come on two
 * sockets) poisons that read; any loss of a pair drops everything.
 */
export function createTokenRecordCache(opts: TokenRecordCacheOptions): TokenRecordCache {
  const observer = opts.observer;
  const entries = createBoundedCache<string, Entry>(opts.maxEntries);
  // A slab is freed once every digest in it is (entries go oldest first).
  const copyDigest = createDigestSlabs(64 * 1024);
  const inFlight = createInFlightReads();

  let closing = false;
  function dropAll(reason: InvalidationLossReason | "flush"): void {
    const held = entries.size;
    entries.clear();
    inFlight.poisonAll();
    // Closing the cache (the service stopping) is no drop to tell of.
    if (!closing) {
      observer?.dropped(reason, held);
      observer?.entries(0);
    }
  }

  const probe = startInvalidationLagProbe({
    redis: opts.redis,
    // The pairs in use when it fires (declared below: rebuilt after a loss).
    pairs: () => pairs,
    intervalMs: opts.probeIntervalMs ?? 10_000,
    lag: (seconds) => observer?.lag(seconds),
  });

  const events: TrackedReadersEvents = {
    invalidated(keys) {
      if (keys === null) {
        dropAll("flush");
        return;
      }
      let counted = 0;
      for (const raw of keys) {
        const key = raw.toString();
        if (key === probe.key) {
          probe.arrived();
          continue;
        }
        counted += 1;
        entries.delete(key);
        inFlight.poison(key);
      }
      if (counted > 0) {
        observer?.invalidated(counted);
        observer?.entries(entries.size);
      }
    },
    lost: dropAll,
  };
  const makePairs = (): TrackedReaders =>
    opts.pairs?.(events) ??
    createTrackedReaders({
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
  function currentPairs(): TrackedReaders {
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

    find(key) {
      const entry = entries.get(key);
      if (entry?.pair.up && entry.pair.epoch === entry.epoch) {
        observer?.hit();
        return entry;
      }
      return undefined;
    },

    async read(key, fallback) {
      const pair = currentPairs().pairOf(key);
      if (pair?.up !== true) {
        return { value: await fallback(), keep: NOT_KEPT };
      }
      const ticket = inFlight.start(key, pair);
      let value: Buffer | null;
      try {
        value = await pair.read(key);
      } catch (err) {
        if (!isClusterRedirect(err)) {
          throw err;
        }
        // A resharding moves the slot away from the pair's node: the cluster
        // client follows it (and learns the new slot map, which drops the
        // cache); a read from there is not tracked, so it is not kept.
        return { value: await fallback(), keep: NOT_KEPT };
      } finally {
        // Invalidations handled in the same tick as the reply still poison
        // it; keep() runs before this (the check goes on in microtasks).
        setImmediate(() => inFlight.settle(ticket));
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
      inFlight.poison(key);
      observer?.entries(entries.size);
    },

    forgetPrefix(prefix) {
      entries.deleteIf((key) => key.startsWith(prefix));
      inFlight.poisonPrefix(prefix);
      observer?.entries(entries.size);
    },

    close() {
      closing = true;
      probe.stop();
      pairs.close();
      entries.clear();
    },
  };
}
