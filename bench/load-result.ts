/** What one load phase measured. */
export interface LoadResult {
  /** Completed requests per second (successes only). */
  throughput: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Requests sent (answered or in flight when the load stopped). */
  sent: number;
  /** Successful requests. */
  ok: number;
  /** Non-2xx answers, transport errors and timeouts. */
  errors: number;
  /** Status codes (or gRPC codes) of the failures, with counts. */
  failures: Record<string, number>;
  seconds: number;
}
