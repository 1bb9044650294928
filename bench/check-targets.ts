import type { Phase, Target } from "./bench-report.js";

/** The goals of the token-check phases (issue #13, section 5), each written once. */
export const CHECK_GOALS = {
  /** Peak throughput of IntrospectToken and of forward-auth, each, × the check floor's peak. */
  floorRatio: 0.7,
  /** p99 at half of its own peak, each (ms). */
  halfPeakP99Ms: 5,
  /** Redis round trips per check. */
  roundTrips: 1,
  /** The load generator's CPU per IntrospectToken × the service's: above it, the client is too heavy to trust. */
  loadGeneratorShare: 0.2,
} as const;

/** What the check phases of one run measured. */
export interface CheckRun {
  /** IntrospectToken over gRPC, closed loop, at each concurrency. */
  introspect: readonly Phase[];
  /** Forward-auth over HTTP/1.1 keep-alive, closed loop, at each concurrency. */
  forwardAuth: readonly Phase[];
  /** The check floor (bench/check-floor-server.ts) under forward-auth's load. */
  floor: readonly Phase[];
  /** Each, paced at half of its own peak. */
  introspectHalfPeak: Phase;
  forwardAuthHalfPeak: Phase;
  floorHalfPeak: Phase;
}

/** The phase of highest throughput (undefined for none). */
export function peakPhase(phases: readonly Phase[]): Phase | undefined {
  return phases.reduce<Phase | undefined>(
    (best, p) => (best === undefined || p.throughput > best.throughput ? p : best),
    undefined,
  );
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const ratio = (a: number, b: number) => (b === 0 ? 0 : round2(a / b));
const atLeast = (goal: number) => `≥ ${goal.toFixed(2)}`;

/** The check phases' rows of the target table. */
export function checkTargets(run: CheckRun): Target[] {
  const floorPeak = peakPhase(run.floor)?.throughput ?? 0;
  const floorRow = (name: string, phases: readonly Phase[]): Target => {
    const peak = peakPhase(phases);
    const throughput = peak?.throughput ?? 0;
    return {
      name: `${name} vs the check floor (peaks)`,
      goal: `${atLeast(CHECK_GOALS.floorRatio)} × floor`,
      measured: `${ratio(throughput, floorPeak)} (${throughput}/s at concurrency ${peak?.concurrency ?? 0} vs ${floorPeak}/s)`,
      met: floorPeak > 0 && throughput >= CHECK_GOALS.floorRatio * floorPeak,
    };
  };
  const halfPeakRow = (name: string, half: Phase): Target => ({
    name: `p99 at half of its own peak (${name})`,
    goal: `≤ ${CHECK_GOALS.halfPeakP99Ms} ms`,
    measured: `${half.p99Ms} ms at ${half.throughput}/s (the check floor at half its peak: ${run.floorHalfPeak.p99Ms} ms at ${run.floorHalfPeak.throughput}/s)`,
    met: half.ok > 0 && half.p99Ms <= CHECK_GOALS.halfPeakP99Ms,
  });
  const tripsOf = (phases: readonly Phase[]) =>
    Math.max(0, ...phases.map((p) => p.redisRoundTrips));
  const introspectTrips = tripsOf([...run.introspect, run.introspectHalfPeak]);
  const forwardAuthTrips = tripsOf([...run.forwardAuth, run.forwardAuthHalfPeak]);
  const introspectPeak = peakPhase(run.introspect);
  const clientUs = introspectPeak?.loadGeneratorCpuUsPerRequest ?? 0;
  const serviceUs = introspectPeak?.serviceCpuUsPerRequest ?? 0;
  const checkPhases = [
    ...run.introspect,
    ...run.forwardAuth,
    ...run.floor,
    run.introspectHalfPeak,
    run.forwardAuthHalfPeak,
    run.floorHalfPeak,
  ];
  const errors = checkPhases.reduce((n, p) => n + p.errors, 0);
  return [
    floorRow("IntrospectToken (gRPC)", run.introspect),
    floorRow("Forward-auth (HTTP/1.1 keep-alive)", run.forwardAuth),
    halfPeakRow("IntrospectToken", run.introspectHalfPeak),
    halfPeakRow("forward-auth", run.forwardAuthHalfPeak),
    {
      name: "Redis round trips per check (IntrospectToken / forward-auth)",
      goal: `≤ ${CHECK_GOALS.roundTrips}`,
      measured: `${introspectTrips} / ${forwardAuthTrips}`,
      met: introspectTrips <= CHECK_GOALS.roundTrips && forwardAuthTrips <= CHECK_GOALS.roundTrips,
    },
    {
      name: "Load generator CPU per IntrospectToken vs the service's, at its peak (the client must not be the limit)",
      goal: `< ${CHECK_GOALS.loadGeneratorShare.toFixed(2)}`,
      measured: `${ratio(clientUs, serviceUs)} (${clientUs} µs vs ${serviceUs} µs)`,
      met: serviceUs > 0 && clientUs < CHECK_GOALS.loadGeneratorShare * serviceUs,
    },
    { name: "Errors (check phases)", goal: "0", measured: String(errors), met: errors === 0 },
  ];
}
