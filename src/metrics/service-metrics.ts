// The service's Prometheus metrics, in a registry of each process's own
// (createServiceMetrics): what the requests feed (createRequestSeries, and
// addObservations for counts kept elsewhere), what the Redis calls feed
// (observeRedis), the token cache's (createTokenCacheMetrics), and
// `GET /metrics`, which answers a scrape (createMetricsEndpoint). With
// several workers a scrape is the whole service's (cluster-metrics.ts).

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";

/** The service's Prometheus metrics, in a registry of their own (no global state). */
export interface ServiceMetrics {
  readonly registry: Registry;
  /** Answers (calls, refusals, plain endpoints) by method, protocol and result code. */
  readonly requests: Counter<"method" | "protocol" | "code">;
  /** Call latency by method and protocol. */
  readonly requestDuration: Histogram<"method" | "protocol">;
  /** Redis calls that failed, by operation. */
  readonly redisErrors: Counter<"operation">;
  /** Redis call latency by operation. */
  readonly redisDuration: Histogram<"operation">;
  readonly tokensCreated: Counter;
  readonly tokensDeleted: Counter;
  /** IntrospectToken answers by outcome: `active` or `inactive`. */
  readonly introspections: Counter<"outcome">;
  /** Live tokens refused for their grants, by reason (`insufficient_scope`, `ip_not_allowed`) and method. */
  readonly grantRefusals: Counter<"reason" | "method">;
  /**
   * Workers that died and were replaced: counted by the primary, whose
   * registry joins the workers' in every scrape; 0 in every other process.
   */
  readonly workerRestarts: Counter;
  /** 1 while this process is ready (Redis answers, not stopping), else 0: asked at each scrape (`ready`). */
  readonly ready: Gauge;
  /** Connections open now, by listener: the count MAX_CONNECTIONS_PER_LISTENER is held to. */
  readonly openConnections: Gauge<"listener">;
  /**
   * Runs `flush` before the request metrics are read (each scrape): counts
   * kept as plain numbers on the hot path (the check lane's) are added then.
   */
  beforeCollect(flush: () => void): void;
}

export interface ServiceMetricsOptions {
  /** Also collect the process metrics (CPU, memory, event loop, GC). Default true. */
  processMetrics?: boolean;
  /**
   * Whether the process can do its work, asked at each scrape for
   * `perps_token_ready`. Default: always ready (a process without Redis of
   * its own, such as the primary of several workers).
   */
  ready?: () => Promise<boolean>;
}

// Sub-millisecond to seconds: a create costs ~0.2 ms of CPU, an outage up to ~1 s.
export const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

export function createServiceMetrics(opts: ServiceMetricsOptions = {}): ServiceMetrics {
  const registry = new Registry();
  if (opts.processMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
  }
  const registers = [registry];
  const ready = opts.ready ?? (async () => true);
  const flushes: (() => void)[] = [];
  const collect = () => {
    for (const flush of flushes) {
      flush();
    }
  };
  return {
    beforeCollect: (flush) => flushes.push(flush),
    registry,
    requests: new Counter({
      name: "perps_token_requests_total",
      help: "Answers of the token service by method (the RPC, or http), protocol (rest, connect, grpc, grpc-web, http) and code.",
      labelNames: ["method", "protocol", "code"],
      registers,
      collect,
    }),
    requestDuration: new Histogram({
      name: "perps_token_request_duration_seconds",
      help: "Latency of calls of the token service by method and protocol.",
      labelNames: ["method", "protocol"],
      buckets: LATENCY_BUCKETS,
      registers,
      collect,
    }),
    redisErrors: new Counter({
      name: "perps_token_redis_errors_total",
      help: "Redis calls that failed (unreachable, timed out, refused), by operation.",
      labelNames: ["operation"],
      registers,
    }),
    redisDuration: new Histogram({
      name: "perps_token_redis_duration_seconds",
      help: "Latency of Redis calls by operation.",
      labelNames: ["operation"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    tokensCreated: new Counter({
      name: "perps_token_tokens_created_total",
      help: "Tokens created.",
      registers,
    }),
    tokensDeleted: new Counter({
      name: "perps_token_tokens_deleted_total",
      help: "Tokens deleted.",
      registers,
    }),
    introspections: new Counter({
      name: "perps_token_introspections_total",
      help: "IntrospectToken answers by outcome (active, inactive).",
      labelNames: ["outcome"],
      registers,
      collect,
    }),
    grantRefusals: new Counter({
      name: "perps_token_grant_refusals_total",
      help: "Live tokens refused for their grants, by reason (insufficient_scope, ip_not_allowed) and method (IntrospectToken, forward-auth).",
      labelNames: ["reason", "method"],
      registers,
    }),
    workerRestarts: new Counter({
      name: "perps_token_worker_restarts_total",
      help: "Worker processes that died and were replaced (WORKERS > 1; counted by the primary).",
      registers,
    }),
    ready: new Gauge({
      name: "perps_token_ready",
      help: "1 while the service can do its work (Redis answers PING, or checks are served from cache while it cannot; not stopping), as /readyz; with several workers the lowest of theirs.",
      // One worker that lost Redis makes the service unready for the calls it takes.
      aggregator: "min",
      registers,
      async collect() {
        this.set((await ready()) ? 1 : 0);
      },
    }),
    openConnections: new Gauge({
      name: "perps_token_open_connections",
      help: "Connections open now, by listener (summed over workers; each worker holds its own MAX_CONNECTIONS_PER_LISTENER).",
      labelNames: ["listener"],
      registers,
    }),
  };
}

/** Feeds Redis call timings and failures into the metrics. */
export function observeRedis(metrics: ServiceMetrics) {
  // One series per operation, looked up once: resolving labels on every call
  // costs more than the observation.
  const durations = new Map<string, { observe(seconds: number): void }>();
  return (operation: string, seconds: number, failed: boolean): void => {
    let duration = durations.get(operation);
    if (duration === undefined) {
      duration = metrics.redisDuration.labels({ operation });
      durations.set(operation, duration);
    }
    duration.observe(seconds);
    if (failed) {
      metrics.redisErrors.inc({ operation });
    }
  };
}

/** The request metrics of one method and protocol. */
export interface RequestSeries {
  readonly duration: { observe(seconds: number): void };
  calls(code: string): { inc(): void };
}

/**
 * The request metric series of each method and protocol, looked up once:
 * resolving label values to a series on every observation costs more than
 * the observation itself.
 */
export function createRequestSeries(
  metrics: ServiceMetrics,
): (method: string, protocol: string) => RequestSeries {
  const cache = new Map<string, RequestSeries>();
  return (method, protocol) => {
    const key = `${method} ${protocol}`;
    let series = cache.get(key);
    if (series === undefined) {
      const byCode = new Map<string, { inc(): void }>();
      series = {
        duration: metrics.requestDuration.labels({ method, protocol }),
        calls(code) {
          let counter = byCode.get(code);
          if (counter === undefined) {
            counter = metrics.requests.labels({ method, protocol, code });
            byCode.set(code, counter);
          }
          return counter;
        },
      };
      cache.set(key, series);
    }
    return series;
  };
}

/** A histogram series' values as prom-client keeps them (lib/histogram.js). */
interface HistogramValues {
  labels: Record<string, string>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/**
 * Adds observations counted elsewhere to a histogram's series: `counts[i]`
 * of them at most `LATENCY_BUCKETS[i]` (the last, past every bound), summing
 * to `sum`. prom-client has no call for it; this writes its series as its
 * `observe` does, and test/unit/metrics/service-metrics-bulk.test.ts holds the
 * two to the same exposition.
 */
export function addObservations(
  histogram: Histogram<string>,
  labels: Record<string, string>,
  counts: ArrayLike<number>,
  sum: number,
): void {
  const held = histogram as unknown as { hashMap: Record<string, HistogramValues> };
  const matches = (values: HistogramValues) =>
    Object.keys(labels).every((name) => values.labels[name] === labels[name]) &&
    Object.keys(values.labels).length === Object.keys(labels).length;
  let series = Object.values(held.hashMap).find(matches);
  if (series === undefined) {
    histogram.zero(labels);
    series = Object.values(held.hashMap).find(matches);
  }
  if (series === undefined) {
    throw new Error(
      "prom-client keeps histogram series otherwise than addObservations writes them",
    );
  }
  let count = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] ?? 0;
    const bound = LATENCY_BUCKETS[i];
    if (bound !== undefined) {
      series.bucketValues[bound] = (series.bucketValues[bound] ?? 0) + n;
    }
    count += n;
  }
  series.count += count;
  series.sum += sum;
}

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
  /** One check answered from the records held while Redis cannot answer (TOKEN_CACHE_GRACE_MS). */
  graceServed(): void;
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
  const graceAnswers = new Counter({
    name: "perps_token_cache_grace_answers_total",
    help: "Checks answered from the token records a worker held when Redis stopped answering (TOKEN_CACHE_GRACE_MS).",
    registers,
  });
  return {
    graceServed: () => graceAnswers.inc(),
    hit: () => hits.inc(),
    miss: () => misses.inc(),
    invalidated: (keys) => invalidations.inc(keys),
    dropped: (reason) => drops.inc({ reason }),
    entries: (count) => entries.set(count),
    lag: (seconds) => lag.observe(seconds),
  };
}

/**
 * `GET /metrics` (and HEAD) in the Prometheus text format; returns false for any other
 * request. `text` gives the exposition (default: this process's registry; a
 * worker passes the whole service's, from `clusterMetricsSource`).
 */
export function createMetricsEndpoint(
  metrics: ServiceMetrics,
  text: () => Promise<string> = () => metrics.registry.metrics(),
): Endpoint {
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    if ((req.method !== "GET" && req.method !== "HEAD") || requestPath(req) !== "/metrics") {
      return false;
    }
    text().then(
      (text) => {
        res.writeHead(200, {
          "content-type": metrics.registry.contentType,
          "content-length": Buffer.byteLength(text),
        });
        res.end(req.method === "HEAD" ? "" : text);
      },
      () => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("metrics unavailable\n");
      },
    );
    return true;
  };
  return { answer };
}
