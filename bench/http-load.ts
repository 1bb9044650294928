import autocannon from "autocannon";
import type { HttpLoadRequests } from "./http-load-requests.js";
import { LatencyRecorder } from "./latency.js";
import type { LoadResult } from "./load-result.js";

export interface HttpLoadOptions extends HttpLoadRequests {
  connections: number;
  /** Run for this long; a body past the last one is empty and answered 400 (an error). */
  seconds: number;
  /** Instead of `seconds`: stop after exactly this many requests. */
  amount?: number;
  /** Cap on requests per second over all connections; default none (closed loop). */
  rate?: number;
}

/**
 * HTTP/1.1 keep-alive load with autocannon, one request in flight per
 * connection. Latencies come from autocannon's per-response times (exact, not
 * its whole-millisecond histogram).
 */
export function runHttpLoad(opts: HttpLoadOptions): Promise<LoadResult> {
  let next = 0;
  const latencies = new LatencyRecorder();
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: opts.url,
        connections: opts.connections,
        ...(opts.amount === undefined ? { duration: opts.seconds } : { amount: opts.amount }),
        ...(opts.rate === undefined ? {} : { overallRate: opts.rate }),
        timeout: 10,
        requests: [
          {
            method: opts.method,
            path: opts.path,
            headers: { "content-type": "application/json" },
            setupRequest: (req) => {
              const tokens = opts.bearerTokens;
              if (tokens === undefined) {
                return { ...req, body: opts.bodies[next++] ?? "" };
              }
              const token = tokens[next++ % tokens.length] ?? "";
              return { ...req, headers: { authorization: `Bearer ${token}` } };
            },
          },
        ],
      },
      (err, result) => {
        if (err !== null) {
          reject(err);
          return;
        }
        const seconds = (performance.now() - started) / 1000;
        const failures: Record<string, number> = {};
        for (const [code, { count }] of Object.entries(result.statusCodeStats)) {
          if (!code.startsWith("2")) {
            failures[code] = count;
          }
        }
        if (result.errors > 0) {
          failures.transport = result.errors;
        }
        const ok = result["2xx"];
        resolve({
          throughput: Math.round(ok / seconds),
          ...percentilesMs(latencies),
          sent: result.requests.sent,
          ok,
          errors: result.non2xx + result.errors,
          failures,
          seconds: Math.round(seconds * 100) / 100,
        });
      },
    );
    instance.on("response", (_client, statusCode, _bytes, ms) => {
      if (statusCode >= 200 && statusCode < 300) {
        latencies.record(ms);
      }
    });
  });
}

function percentilesMs(latencies: LatencyRecorder) {
  const { p50, p90, p99 } = latencies.percentiles();
  return { p50Ms: p50, p90Ms: p90, p99Ms: p99 };
}
