/** Latency samples in milliseconds, kept exactly (a run holds at most a few hundred thousand). */
export class LatencyRecorder {
  private samples = new Float64Array(1 << 16);
  private count = 0;

  record(ms: number): void {
    if (this.count === this.samples.length) {
      const grown = new Float64Array(this.samples.length * 2);
      grown.set(this.samples);
      this.samples = grown;
    }
    this.samples[this.count++] = ms;
  }

  get size(): number {
    return this.count;
  }

  /** p50/p90/p99 in milliseconds, rounded to microseconds. */
  percentiles(): { p50: number; p90: number; p99: number } {
    const sorted = this.samples.slice(0, this.count).sort();
    const at = (q: number): number => {
      if (sorted.length === 0) {
        return 0;
      }
      const value = sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
      return Math.round(value * 1000) / 1000;
    };
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
  }
}
