import type { Phase } from "./bench-report.js";

/** The phase of highest throughput (undefined for none). */
export function peakPhase(phases: readonly Phase[]): Phase | undefined {
  return phases.reduce<Phase | undefined>(
    (best, p) => (best === undefined || p.throughput > best.throughput ? p : best),
    undefined,
  );
}
