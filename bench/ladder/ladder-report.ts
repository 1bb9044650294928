import { median } from "../median.js";
import type { LadderPath, LadderStep } from "./ladder-steps.js";

/** One step's measurement in one round. */
export interface StepRun {
  throughput: number;
  cpuUsPerRequest: number;
  p99Ms: number;
  errors: number;
  failures: Record<string, number>;
}

/** One step's result: the medians of its rounds, and the delta to the step below. */
export interface StepSummary extends LadderStep {
  throughput: number;
  cpuUsPerRequest: number;
  p99Ms: number;
  /** µs of CPU per request this step adds to the one below (0 for the floor). */
  deltaUs: number;
  /** Throughput ÷ the floor's (the first step's). */
  ofFloor: number;
  /** Lowest and highest µs per request over the rounds: the noise. */
  cpuUsRange: [number, number];
  errors: number;
  failures: Record<string, number>;
  runs: StepRun[];
}

export interface LadderResult {
  path: LadderPath;
  date: string;
  node: string;
  /** Where checks found a token's record after its first read (run-ladder's `--lookup`). */
  lookup: "memory" | "redis";
  quick: boolean;
  concurrency: number;
  rounds: number;
  seconds: number;
  steps: StepSummary[];
}

/** Medians per step over the rounds; a step with errors keeps them (its figures are not a throughput). */
export function summarizeLadder(
  input: Omit<LadderResult, "steps"> & {
    steps: readonly LadderStep[];
    runs: readonly StepRun[][];
  },
): LadderResult {
  const { runs, steps, ...rest } = input;
  const summaries: StepSummary[] = [];
  steps.forEach((step, i) => {
    const own = runs[i] ?? [];
    const cpu = own.map((r) => r.cpuUsPerRequest);
    const failures: Record<string, number> = {};
    for (const run of own) {
      for (const [label, count] of Object.entries(run.failures)) {
        failures[label] = (failures[label] ?? 0) + count;
      }
    }
    const cpuUsPerRequest = Math.round(median(cpu));
    const throughput = Math.round(median(own.map((r) => r.throughput)));
    const below = summaries[i - 1];
    const floor = summaries[0];
    summaries.push({
      ...step,
      throughput,
      cpuUsPerRequest,
      p99Ms: Math.round(median(own.map((r) => r.p99Ms)) * 1000) / 1000,
      deltaUs: below === undefined ? 0 : cpuUsPerRequest - below.cpuUsPerRequest,
      ofFloor:
        floor === undefined || floor.throughput === 0
          ? 1
          : Math.round((throughput / floor.throughput) * 100) / 100,
      cpuUsRange: [Math.min(...cpu), Math.max(...cpu)],
      errors: own.reduce((sum, r) => sum + r.errors, 0),
      failures,
      runs: [...own],
    });
  });
  return { ...rest, steps: summaries };
}

export function ladderMarkdown(result: LadderResult): string {
  const rows = result.steps.map(
    (s, i) =>
      `| ${i} | ${s.layer} | ${s.adds} | ${s.errors > 0 ? `(${s.throughput.toLocaleString("en-US")}, errors)` : s.throughput.toLocaleString("en-US")} | ${s.ofFloor.toFixed(2)} | ${s.cpuUsPerRequest} | ${s.cpuUsRange[0]}–${s.cpuUsRange[1]} | ${i === 0 ? "" : `${s.deltaUs >= 0 ? "+" : ""}${s.deltaUs}`} | ${s.p99Ms} | ${s.errors}${s.errors > 0 ? ` ${JSON.stringify(s.failures)}` : ""} |`,
  );
  return [
    `## Ladder: ${result.path}`,
    "",
    `${result.date}, node ${result.node}, ${result.quick ? "quick" : "full"}, checks' records from ${result.lookup}: concurrency ${result.concurrency}, ${result.rounds} rounds of ${result.seconds} s, steps alternating; medians of the rounds. Every step one process (the service at WORKERS=1).`,
    "",
    "| Step | Layer | Adds | req/s | × floor | CPU µs / req | µs range | Δ µs | p99 ms | Errors |",
    "|---:|---|---|---:|---:|---:|---|---:|---:|---|",
    ...rows,
    "",
  ].join("\n");
}
