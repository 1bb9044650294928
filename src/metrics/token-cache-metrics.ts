import { Counter, Gauge, Histogram, type Registry } from "prom-client";

// From a tenth of a millisecond (loopback) to a second (the heartbeat's bound).
const LAG_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1];

/** What the token cache reports (the store's TokenRecordCacheObserver). */
export interface TokenCacheMetrics {
  hit(): void;
  miss(): void;
  invalidated(keys: number): void;
  dropped(reason: string): void;
  entries(count: number): void;
  lag(seconds: number): void;
}

/**
 * The token cache's metrics, registered in the service's registry: hits,
 * misses, invalidations, entries, whole-cache drops by reason, and the lag
 * from a change in Redis to its invalidation's arrival.
 */
export function createTokenCacheMetrics(registry: Registry): TokenCacheMetrics {
  const registers = [registry];
  const hits = new Counter({
    name: "perps_token_cache_hits_total",
    help: "Bearer checks answered from the token cache (no Redis call).",
    registers,
  });
  const misses = new Counter({
    name: "perps_token_cache_misses_total",
    help: "Bearer checks of well-formed tokens not in the token cache (read from Redis).",
    registers,
  });
  const invalidations = new Counter({
    name: "perps_token_cache_invalidations_total",
    help: "Token keys Redis reported changed (delete, expiry, eviction, another client's write).",
    registers,
  });
  const entries = new Gauge({
    name: "perps_token_cache_entries",
    help: "Token records held in the token cache (summed over workers).",
    registers,
  });
  const drops = new Counter({
    name: "perps_token_cache_drops_total",
    help: "Whole-cache drops by reason: connection (the invalidation channel or tracked reader lost), heartbeat (the channel stalled), topology (a cluster's slot map changed), flush (FLUSHALL/FLUSHDB), closed.",
    labelNames: ["reason"],
    registers,
  });
  const lag = new Histogram({
    name: "perps_token_cache_invalidation_lag_seconds",
    help: "From a probe key's change in Redis to its invalidation's arrival (one probe every 10 s per worker).",
    buckets: LAG_BUCKETS,
    registers,
  });
  return {
    hit: () => hits.inc(),
    miss: () => misses.inc(),
    invalidated: (keys) => invalidations.inc(keys),
    dropped: (reason) => drops.inc({ reason }),
    entries: (count) => entries.set(count),
    lag: (seconds) => lag.observe(seconds),
  };
}
