import type { BenchPhase, PhaseName } from "../bench-context.js";
import { checkFloorPhase } from "./check-floor.js";
import { checksPhase } from "./checks.js";
import { createPhase } from "./create.js";
import { deletePhase } from "./delete.js";
import { floorPhase } from "./floor.js";
import { halfPeakPhase } from "./half-peak.js";
import { leakPhase } from "./leak.js";
import { memoryPhase } from "./memory.js";
import { peerPhase } from "./peer.js";

/** Every phase, in the order a run takes them: those that need the service first. */
export const PHASES: readonly BenchPhase[] = [
  createPhase,
  deletePhase,
  halfPeakPhase,
  checksPhase,
  leakPhase,
  peerPhase,
  floorPhase,
  checkFloorPhase,
  memoryPhase,
];

/** The phases to run for `--only` (with the phases they need), in run order; all without it. */
export function selectPhases(only: readonly PhaseName[] | undefined): BenchPhase[] {
  if (only === undefined) {
    return [...PHASES];
  }
  const wanted = new Set<PhaseName>();
  const add = (name: PhaseName) => {
    if (wanted.has(name)) {
      return;
    }
    wanted.add(name);
    for (const need of PHASES.find((p) => p.name === name)?.needs ?? []) {
      add(need);
    }
  };
  for (const name of only) {
    add(name);
  }
  return PHASES.filter((p) => wanted.has(p.name));
}
