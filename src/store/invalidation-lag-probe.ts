import type { RedisHolder } from "../redis/redis-holder.js";
import type { TrackedReaders } from "../redis/tracked-readers.js";

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
