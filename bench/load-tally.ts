import { LatencyRecorder } from "./latency.js";
import type { LoadResult } from "./load-result.js";

/** Counts a load's successes (with their latency) and failures (by label), then its LoadResult. */
export class LoadTally {
  private readonly latencies = new LatencyRecorder();
  private readonly failures: Record<string, number> = {};
  private ok = 0;
  private errors = 0;

  success(latencyMs: number): void {
    this.ok++;
    this.latencies.record(latencyMs);
  }

  failure(label: string): void {
    this.errors++;
    this.failures[label] = (this.failures[label] ?? 0) + 1;
  }

  get answered(): number {
    return this.ok + this.errors;
  }

  /** The result of a load that sent `sent` requests in `seconds`. */
  result(sent: number, seconds: number): LoadResult {
    const { p50, p90, p99 } = this.latencies.percentiles();
    return {
      throughput: seconds > 0 ? Math.round(this.ok / seconds) : 0,
      p50Ms: p50,
      p90Ms: p90,
      p99Ms: p99,
      sent,
      ok: this.ok,
      errors: this.errors,
      failures: { ...this.failures },
      seconds: Math.round(seconds * 100) / 100,
    };
  }
}
