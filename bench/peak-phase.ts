import type { Phase } from "./bench-report.js";

/**
 * The phase of highest throughput among those without errors (undefined for
 * none): a row with errors is not a throughput, so it is never a peak.
 */
export function peakPhase(phases: readonly Phase[]): Phase | undefined {
  return phases.reduce<Phase | undefined>(
    (best, p) =>
      p.errors === 0 && (best === undefined || p.throughput > best.throughput) ? p : best,
    undefined,
  );
}
