import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

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
    workerRestarts: new Counter({
      name: "perps_token_worker_restarts_total",
      help: "Worker processes that died and were replaced (WORKERS > 1; counted by the primary).",
      registers,
    }),
    ready: new Gauge({
      name: "perps_token_ready",
      help: "1 while the service can do its work (Redis answers PING, not stopping), as /readyz; with several workers the lowest of theirs.",
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
