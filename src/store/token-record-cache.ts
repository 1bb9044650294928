/**
 * The token records a process keeps in memory, dropped when Redis says they
 * changed (server-assisted client-side caching over the tracking connections
 * of src/redis/tracked-readers.ts). This file holds the cache and, below it,
 * its three parts: the reads in flight, which an invalidation overtaking a
 * reply poisons; the probe that measures how long invalidations take to
 * arrive; and the slabs the cached digests are copied into.
 */

import { createBoundedCache } from "../cache/bounded-cache.js";
import type { RedisClient } from "../redis/redis-client.js";
import { isClusterRedirect, isNotConnected, isRedisUnreachable } from "../redis/redis-failure.js";
import type { RedisHolder } from "../redis/redis-holder.js";
import type { TrackedReader } from "../redis/tracked-reader.js";
import {
  createTrackedReaders,
  type InvalidationLossReason,
  type TrackedReaders,
  type TrackedReadersEvents,
} from "../redis/tracked-readers.js";
import { type CacheGraceObserver, createCacheGrace } from "./cache-grace.js";
import type { TokenGrants } from "./token-grants.js";

/** A token's record as the bearer check needs it (layout 1 records only: they carry their expiry). */
export interface CachedTokenRecord {
  digest: Buffer;
  name: string;
  expiresAtMs: number;
  /** Its scopes and allow-list (most records share DEFAULT_GRANTS). */
  grants: TokenGrants;
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
  /**
   * Redis failed a read of `key` with `err`. While Redis cannot answer, the
   * grace's held record of the key (issue 43), if it has one. A read that
   * failed because the client is reconnecting waits (at most a second) for
   * how that ends: "retry" once it is connected again (a connection that
   * merely dropped), the held record if Redis turns out unreachable.
   */
  unanswered(key: string, err: unknown): Promise<CachedTokenRecord | "retry" | undefined>;
  /** Checks are answered from the records held since Redis was lost (TOKEN_CACHE_GRACE_MS). */
  readonly servingFromCache: boolean;
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
  /**
   * How long after the invalidations are lost the records held then may
   * answer checks that Redis fails to answer (TOKEN_CACHE_GRACE_MS); 0: never.
   */
  graceMs: number;
  /** Told when a grace starts and ends, and of each answer it serves. */
  graceObserver?: CacheGraceObserver;
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
  let entries = createBoundedCache<string, Entry>(opts.maxEntries);
  const grace = createCacheGrace<Entry>({
    graceMs: opts.graceMs,
    ...(opts.graceObserver === undefined ? {} : { observer: opts.graceObserver }),
  });
  // A slab is freed once every digest in it is (entries go oldest first).
  const copyDigest = createDigestSlabs(64 * 1024);
  const inFlight = createInFlightReads();

  let closing = false;
  function dropAll(reason: InvalidationLossReason | "flush"): void {
    const held = entries.size;
    if (reason === "flush" || closing) {
      // Redis' data is gone (or the service stops): nothing of it is served, not even in grace.
      grace.drop(closing ? "closed" : "flush");
      entries.clear();
    } else {
      // Kept aside, served only if Redis then fails to answer (a grace).
      grace.hold(entries);
      entries = createBoundedCache<string, Entry>(opts.maxEntries);
    }
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
        grace.forget(key);
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
  /**
   * The client's own connection failures say Redis cannot answer (a
   * reconnect refused or timed out), and its ready event that it answers
   * again; heard once per client, the rebuilt ones too.
   */
  const heard = new WeakSet<RedisClient>();
  function hear(client: RedisClient): void {
    if (opts.pairs !== undefined || heard.has(client)) {
      return;
    }
    heard.add(client);
    const failed = (err: unknown) => {
      if (isRedisUnreachable(err)) {
        grace.failed();
        reconnected.settle("unreachable");
      }
    };
    client.on("error", failed);
    client.on("node error", failed);
    client.on("ready", () => {
      grace.answered();
      reconnected.settle("ready");
    });
  }
  const reconnected = createReconnectOutcome(RECONNECT_WAIT_MS);
  let pairsOf = opts.redis.client;
  hear(pairsOf);
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
      hear(pairsOf);
      pairs = makePairs();
      pairsBuilt = performance.now();
    }
    return pairs;
  }

  /** A held record while the grace serves; its pair back up means Redis answers again. */
  function heldRecord(key: string): Entry | undefined {
    const entry = grace.take(key);
    if (entry?.pair.up === true) {
      grace.answered();
      return undefined;
    }
    return entry;
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
      if (grace.serving) {
        const held = heldRecord(key);
        if (held !== undefined) {
          return held;
        }
      }
      observer?.miss();
      return undefined;
    },

    async unanswered(key, err) {
      // A client the holder replaced since the pairs were built is heard too.
      hear(opts.redis.client);
      if (isRedisUnreachable(err)) {
        grace.failed();
      } else if (!grace.serving && opts.pairs === undefined && isNotConnected(err)) {
        const client = opts.redis.client;
        if (client.status === "ready") {
          // A stream that shows its close before its client has heard of it.
          await new Promise((heard) => setTimeout(heard, CLOSE_NOTICE_MS));
        }
        // Still ready: another connection closed (a tracking one, a node's), read again.
        if (client.status === "ready") {
          return "retry";
        }
        // Reconnecting: a refused or timed-out connect makes it an outage,
        // a connect that works makes it a read to try again.
        if ((await reconnected.next()) === "ready") {
          return "retry";
        }
      }
      return grace.serving ? heldRecord(key) : undefined;
    },

    get servingFromCache() {
      return grace.serving;
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
        const value = await fallback();
        grace.answered();
        return { value, keep: NOT_KEPT };
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
        const moved = await fallback();
        grace.answered();
        return { value: moved, keep: NOT_KEPT };
      } finally {
        // Invalidations handled in the same tick as the reply still poison
        // it; keep() runs before this (the check goes on in microtasks).
        setImmediate(() => inFlight.settle(ticket));
      }
      grace.answered();
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
            grants: record.grants,
            pair,
            epoch: ticket.epoch,
          });
          observer?.entries(entries.size);
        },
      };
    },

    forget(key) {
      entries.delete(key);
      grace.forget(key);
      inFlight.poison(key);
      observer?.entries(entries.size);
    },

    forgetPrefix(prefix) {
      entries.deleteIf((key) => key.startsWith(prefix));
      grace.forgetPrefix(prefix);
      inFlight.poisonPrefix(prefix);
      observer?.entries(entries.size);
    },

    close() {
      closing = true;
      probe.stop();
      pairs.close();
      entries.clear();
      grace.drop("closed");
    },
  };
}

// Waiting for a reconnect.

/** The longest a check waits for a reconnect's outcome: the client's connect timeout. */
const RECONNECT_WAIT_MS = 1000;
/**
 * How long a check whose connection was found closed waits for its client to
 * hear of the close (socket close callbacks run a loop turn or two later).
 */
const CLOSE_NOTICE_MS = 10;

type ReconnectOutcome = "ready" | "unreachable" | "timeout";

/**
 * How the client's reconnect ends, one promise shared by every check
 * waiting (no listener per check): settled by the client's next ready or
 * unreachable error, or after `waitMs`.
 */
function createReconnectOutcome(waitMs: number) {
  let pending:
    | { promise: Promise<ReconnectOutcome>; settle: (o: ReconnectOutcome) => void }
    | undefined;
  return {
    next(): Promise<ReconnectOutcome> {
      if (pending === undefined) {
        let resolve: (o: ReconnectOutcome) => void = () => undefined;
        const promise = new Promise<ReconnectOutcome>((done) => {
          resolve = done;
        });
        const timer = setTimeout(() => settle("timeout"), waitMs);
        timer.unref();
        const settle = (outcome: ReconnectOutcome) => {
          clearTimeout(timer);
          pending = undefined;
          resolve(outcome);
        };
        pending = { promise, settle };
      }
      return pending.promise;
    },
    settle(outcome: ReconnectOutcome): void {
      pending?.settle(outcome);
    },
  };
}

// Reads in flight.

/** A read of a token key on a tracking connection, from its start until the tick after its reply. */
export interface InFlightRead {
  readonly key: string;
  readonly pair: TrackedReader;
  /** The pair's epoch when the read started. */
  readonly epoch: number;
  /** A change of the key came while the read was in flight. */
  readonly poisoned: boolean;
  /** Past the tick its reply came in: later invalidations no longer see it. */
  readonly settled: boolean;
}

/**
 * The reads of the token cache in flight, by key. An invalidation and the
 * reply of a read of the same key come on two sockets, so the invalidation
 * may overtake the reply: it poisons the read, whose record is then not kept.
 */
export interface InFlightReads {
  start(key: string, pair: TrackedReader): InFlightRead;
  /** The read is over: no later invalidation concerns it. */
  settle(read: InFlightRead): void;
  poison(key: string): void;
  poisonPrefix(prefix: string): void;
  poisonAll(): void;
}

interface Ticket {
  key: string;
  pair: TrackedReader;
  epoch: number;
  poisoned: boolean;
  settled: boolean;
}

export function createInFlightReads(): InFlightReads {
  const byKey = new Map<string, Ticket[]>();
  const poisonEach = (tickets: Ticket[] | undefined) => {
    for (const ticket of tickets ?? []) {
      ticket.poisoned = true;
    }
  };
  return {
    start(key, pair) {
      const ticket: Ticket = { key, pair, epoch: pair.epoch, poisoned: false, settled: false };
      const tickets = byKey.get(key);
      if (tickets === undefined) {
        byKey.set(key, [ticket]);
      } else {
        tickets.push(ticket);
      }
      return ticket;
    },
    settle(read) {
      const tickets = byKey.get(read.key) ?? [];
      const ticket = tickets.find((t) => t === read);
      if (ticket === undefined) {
        return;
      }
      ticket.settled = true;
      tickets.splice(tickets.indexOf(ticket), 1);
      if (tickets.length === 0) {
        byKey.delete(read.key);
      }
    },
    poison(key) {
      poisonEach(byKey.get(key));
    },
    poisonPrefix(prefix) {
      for (const [key, tickets] of byKey) {
        if (key.startsWith(prefix)) {
          poisonEach(tickets);
        }
      }
    },
    poisonAll() {
      for (const tickets of byKey.values()) {
        poisonEach(tickets);
      }
    },
  };
}

// The invalidation lag probe.

const PROBE_PREFIX = "perps:cache-probe:";

/**
 * Measures how long Redis' invalidations take to arrive: every interval, a
 * key of this process is read on its tracking connection (so Redis tracks
 * it), then written by the service's client; its invalidation's arrival
 * ends the measure. The key expires after three intervals.
 */
export interface InvalidationLagProbe {
  /** The probe's key: its invalidations are the probe's, not a token's. */
  readonly key: string;
  /** The probe key's invalidation came: tells the lag, if a write was timed. */
  arrived(): void;
  stop(): void;
}

export interface InvalidationLagProbeOptions {
  redis: RedisHolder;
  /** The pairs in use now (they are rebuilt after a loss). */
  pairs: () => TrackedReaders;
  intervalMs: number;
  /** From the probe key's change to its invalidation's arrival. */
  lag(seconds: number): void;
}

/** Starts the probe; with an interval of 0, it never probes. */
export function startInvalidationLagProbe(opts: InvalidationLagProbeOptions): InvalidationLagProbe {
  const key = `${PROBE_PREFIX}${process.pid}:${Math.random().toString(36).slice(2)}`;
  let sentAt: number | undefined;
  const timer =
    opts.intervalMs > 0
      ? setInterval(async () => {
          const pair = opts.pairs().pairOf(key);
          if (pair?.up !== true) {
            return;
          }
          try {
            await pair.read(key);
            sentAt = performance.now();
            await opts.redis.client.set(key, String(Date.now()), "PX", opts.intervalMs * 3);
          } catch {
            sentAt = undefined;
          }
        }, opts.intervalMs)
      : undefined;
  timer?.unref();
  return {
    key,
    arrived() {
      if (sentAt !== undefined) {
        opts.lag((performance.now() - sentAt) / 1000);
        sentAt = undefined;
      }
    },
    stop() {
      if (timer !== undefined) {
        clearInterval(timer);
      }
    },
  };
}

// Digest slabs.

/**
 * Copies digests into slabs that hold only digests. A copy from node's shared
 * 8 KiB pool (Buffer.from) would keep its whole slab alive, with whatever
 * each request allocated beside it: about 300 bytes per cached token, measured.
 */
export function createDigestSlabs(slabBytes: number): (digest: Buffer) => Buffer {
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
