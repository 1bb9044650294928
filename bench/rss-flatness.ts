/** The long-load memory check's reading of a worker's RSS after each load (issue 40). */
export interface RssFlatness {
  /** The samples after the warm-up, the ones judged (MB). */
  readonly judged: readonly number[];
  readonly lowMb: number;
  readonly highMb: number;
  /** highMb ÷ lowMb. */
  readonly ratio: number;
  /** ratio ≤ 1 + tolerance: no growth beyond the tolerance once warm. */
  readonly flat: boolean;
}

export interface RssFlatnessOptions {
  /** Samples taken while the heap and the caches fill, left out. */
  warmup: number;
  /** How much the judged samples may spread, as a fraction (0.15: 15 %). */
  tolerance: number;
}

/**
 * Flat after the warm-up, within the tolerance: the largest sample after the
 * warm-up at most (1 + tolerance) × the smallest. A leak grows with the
 * load, so over enough loads it spreads the samples past any tolerance; the
 * garbage collector's swings stay within it. Fewer than two samples to judge
 * is a bench misconfigured, not a verdict.
 */
export function rssFlatness(rssMb: readonly number[], opts: RssFlatnessOptions): RssFlatness {
  const judged = rssMb.slice(opts.warmup);
  if (judged.length < 2) {
    throw new Error(
      `${rssMb.length} samples with a warm-up of ${opts.warmup}: at least two must be left to judge`,
    );
  }
  const lowMb = Math.min(...judged);
  const highMb = Math.max(...judged);
  const ratio = lowMb <= 0 ? Number.POSITIVE_INFINITY : highMb / lowMb;
  return {
    judged,
    lowMb,
    highMb,
    ratio: Math.round(ratio * 1000) / 1000,
    flat: ratio <= 1 + opts.tolerance,
  };
}
