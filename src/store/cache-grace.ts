import type { BoundedCache } from "../cache/bounded-cache.js";

/** Why a grace ended, or why records held for one were let go. */
export type GraceEnd = "redis answered" | "grace over" | "flush" | "closed";

/** Told what the grace does: the warn lines and the counter. */
export interface CacheGraceObserver {
  /** Redis failed to answer while records were held: checks are served from them. */
  started(held: number, sinceLossMs: number): void;
  /** One check answered from a held record. */
  served(): void;
  /** The grace that `started` ended, after `served` answers. */
  ended(reason: GraceEnd, served: number): void;
}

/**
 * The records a cache held when it lost Redis' invalidations, kept for
 * `graceMs` from that loss and served only while Redis fails to answer
 * (issue 43). A loss alone serves nothing: a connection that dropped to a
 * Redis that is up is read again at once, as without grace; only `failed`
 * (a reconnect refused or timed out, a read past its bound) starts serving.
 */
export interface CacheGrace<R> {
  /** The cache lost its invalidations: `records` are held from now (a grace's first loss counts). */
  hold(records: BoundedCache<string, R>): void;
  /** Redis failed to answer: serve the held records, if the grace has not passed. */
  failed(): void;
  /** Redis answered: the held records go, before any answer from them. */
  answered(): void;
  /** The held record of `key` while serving; undefined otherwise. */
  take(key: string): R | undefined;
  /** This process changed `key`, or Redis said it changed: never served again. */
  forget(key: string): void;
  /** `forget` for every key starting with `prefix` (a user's tokens). */
  forgetPrefix(prefix: string): void;
  /** Every held record goes (a flush, the cache closing). */
  drop(reason: "flush" | "closed"): void;
  /** Checks are answered from held records now ("serving from cache"). */
  readonly serving: boolean;
}

export interface CacheGraceOptions {
  /** How long after the loss held records may be served; 0: never (a loss drops them). */
  graceMs: number;
  observer?: CacheGraceObserver;
  /** Monotonic milliseconds. Default `performance.now`. */
  now?: () => number;
}

/**
 * How recent a failure to answer makes a loss an outage at once: the client
 * may tell of its refused reconnect before the cache's own connections tell
 * of their close. The reconnects' longest pause (1 s) apart, failures repeat.
 */
const RECENT_FAILURE_MS = 1000;

export function createCacheGrace<R>(opts: CacheGraceOptions): CacheGrace<R> {
  const { graceMs, observer } = opts;
  const now = opts.now ?? (() => performance.now());
  let held: BoundedCache<string, R> | undefined;
  let lostAt = 0;
  // When Redis last failed to answer: a loss just after it (the connection
  // the failure closed) is an outage already.
  let failedAt = Number.NEGATIVE_INFINITY;
  let serving = false;
  let served = 0;
  let timer: NodeJS.Timeout | undefined;

  function letGo(reason: GraceEnd): void {
    held?.clear();
    held = undefined;
    clearTimeout(timer);
    timer = undefined;
    if (serving) {
      serving = false;
      observer?.ended(reason, served);
    }
    served = 0;
  }

  return {
    hold(records) {
      if (graceMs <= 0 || records.size === 0) {
        // Nothing to serve from: a worker that held no token is no more ready than without a cache.
        records.clear();
        return;
      }
      if (held !== undefined) {
        // A second loss within one outage: the first one bounds what may be stale.
        records.clear();
        return;
      }
      held = records;
      lostAt = now();
      // Past the grace nothing is served, whether a check comes or not.
      timer = setTimeout(() => letGo("grace over"), graceMs);
      timer.unref();
      if (lostAt - failedAt < RECENT_FAILURE_MS) {
        serving = true;
        observer?.started(held.size, 0);
      }
    },
    failed() {
      failedAt = now();
      if (held === undefined || serving) {
        return;
      }
      if (now() - lostAt >= graceMs) {
        letGo("grace over");
        return;
      }
      serving = true;
      observer?.started(held.size, now() - lostAt);
    },
    answered() {
      failedAt = Number.NEGATIVE_INFINITY;
      if (held !== undefined) {
        letGo("redis answered");
      }
    },
    take(key) {
      if (!serving || held === undefined) {
        return undefined;
      }
      if (now() - lostAt >= graceMs) {
        letGo("grace over");
        return undefined;
      }
      const record = held.get(key);
      if (record !== undefined) {
        served += 1;
        observer?.served();
      }
      return record;
    },
    forget(key) {
      held?.delete(key);
    },
    forgetPrefix(prefix) {
      held?.deleteIf((key) => key.startsWith(prefix));
    },
    drop(reason) {
      letGo(reason);
    },
    get serving() {
      return serving;
    },
  };
}
