import type { Logger } from "../log/logger.js";
import {
  addObservations,
  LATENCY_BUCKETS,
  type ServiceMetrics,
} from "../metrics/service-metrics.js";

/** The protocol label of `/auth` answers: theirs count no introspection. */
const AUTH_PROTOCOL = "http";

/** What a check answered: a live token, or anything else. */
export type CheckAnswer = "live" | "notLive";

/** One kind of check, as the metrics name it. */
export interface CheckKind {
  /** The request metrics' method label: the RPC, or `forward-auth`. */
  readonly method: string;
  /** The request metrics' protocol label. */
  readonly protocol: string;
}

/** A kind of check, counted: what the lane tells for each of its answers. */
export interface CheckCounter {
  /** One answer of a live token, `seconds` after its request arrived. */
  live(requestId: string | undefined, seconds: number): void;
}

export interface CheckTallyOptions {
  logger: Logger;
  metrics: ServiceMetrics;
  /** How often a worker that answered checks writes their summary line. Default 10000 ms. */
  summaryMs?: number;
}

/**
 * Checks are counted, not logged one by one (docs/design-choices.md): every
 * check is counted and timed in the request metrics as every answer is, and
 * each worker writes one summary line per period in which it answered
 * checks, with the counts by listener and answer and the slowest. At
 * `LOG_LEVEL=debug`, every check also writes its own line.
 */
export interface CheckTally {
  /** The counter of the lane's answers of `kind` on `listener`: its metric series are resolved once. */
  counter(kind: CheckKind, listener: string): CheckCounter;
  /** A check the pipeline answered (its metrics and debug line are the pipeline's): the summary only. */
  summarize(listener: string, answer: CheckAnswer, seconds: number): void;
  /** Whether each check writes its own line (`LOG_LEVEL=debug`). */
  readonly lineEach: boolean;
  /** Writes the last summary and stops. */
  stop(): void;
}

export function createCheckTally(opts: CheckTallyOptions): CheckTally {
  const { logger, metrics } = opts;
  const lineEach = logger.isLevelEnabled("debug");
  /** Counts by listener, then answer, since the last summary (zeroed in place: counters hold them). */
  const counts = new Map<string, Record<CheckAnswer, number>>();
  let slowest = 0;
  let since = Date.now();

  function countOf(listener: string): Record<CheckAnswer, number> {
    let count = counts.get(listener);
    if (count === undefined) {
      count = { live: 0, notLive: 0 };
      counts.set(listener, count);
    }
    return count;
  }

  function summarize(listener: string, answer: CheckAnswer, seconds: number): void {
    countOf(listener)[answer] += 1;
    if (seconds > slowest) {
      slowest = seconds;
    }
  }

  function writeSummary(): void {
    const checks: Record<string, Record<CheckAnswer, number>> = {};
    let any = false;
    for (const [listener, count] of counts) {
      if (count.live + count.notLive > 0) {
        checks[listener] = { ...count };
        count.live = 0;
        count.notLive = 0;
        any = true;
      }
    }
    const now = Date.now();
    if (any) {
      logger.info(
        {
          seconds: Math.round((now - since) / 1000),
          checks,
          slowestMs: Math.round(slowest * 1e4) / 10,
        },
        "checks answered",
      );
      slowest = 0;
    }
    since = now;
  }
  const timer = setInterval(writeSummary, opts.summaryMs ?? 10_000);
  timer.unref();

  return {
    lineEach,
    summarize,
    counter(kind, listener) {
      // Plain numbers per check, added to the metrics at each scrape: a
      // prom-client observation costs more than the rest of a check's bookkeeping.
      const buckets = new Float64Array(LATENCY_BUCKETS.length + 1);
      let sum = 0;
      let answered = 0;
      const introspection = kind.protocol !== AUTH_PROTOCOL;
      metrics.beforeCollect(() => {
        if (answered === 0) {
          return;
        }
        metrics.requests.inc({ ...kind, code: "ok" }, answered);
        if (introspection) {
          metrics.introspections.inc({ outcome: "active" }, answered);
        }
        addObservations(metrics.requestDuration, { ...kind }, buckets, sum);
        buckets.fill(0);
        sum = 0;
        answered = 0;
      });
      const count = countOf(listener);
      return {
        live(requestId, seconds) {
          let i = 0;
          while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] ?? 0)) {
            i++;
          }
          buckets[i] = (buckets[i] ?? 0) + 1;
          sum += seconds;
          answered += 1;
          count.live += 1;
          if (seconds > slowest) {
            slowest = seconds;
          }
          if (lineEach) {
            logger.debug(
              { ...kind, requestId, code: "ok", ms: Math.round(seconds * 1000), listener },
              "request",
            );
          }
        },
      };
    },
    stop() {
      clearInterval(timer);
      writeSummary();
    },
  };
}
