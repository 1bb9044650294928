import { PEER_CONCURRENCIES } from "./bench-plan.js";
import type { BenchReport, PeerPoint, Phase, Series, Target } from "./bench-report.js";
import { peakPhase } from "./peak-phase.js";
import { rssTrend } from "./rss-trend.js";

/** A goal, written once: the check and the text both come from it. */
export interface Goal {
  readonly compare: "≥" | "≤" | "<" | "=";
  readonly value: number;
  /** After the value, e.g. "× ceiling", "ms". */
  readonly unit?: string;
  /** Decimals of the value in the text. Default 0. */
  readonly digits?: number;
}

/** What a target read from a run: the value the goal is checked against, and the text shown. */
export interface Reading {
  /** NaN when the run cannot tell (nothing measured where it must be): unmet. */
  readonly value: number;
  readonly measured: string;
}

/** One target: its name, goal, how it is measured, and how it reads a run (undefined: its phases did not run). */
export interface TargetSpec {
  readonly name: string;
  readonly goal: Goal;
  readonly how: string;
  read(r: BenchReport): Reading | undefined;
}

export function goalText(goal: Goal): string {
  const value = goal.value.toFixed(goal.digits ?? 0);
  const compare = goal.compare === "=" ? "" : `${goal.compare} `;
  return `${compare}${value}${goal.unit === undefined ? "" : ` ${goal.unit}`}`;
}

export function goalMet(goal: Goal, value: number): boolean {
  switch (goal.compare) {
    case "≥":
      return value >= goal.value;
    case "≤":
      return value <= goal.value;
    case "<":
      return value < goal.value;
    case "=":
      return value === goal.value;
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;
/** A ratio as shown (two decimals; 0 for a zero denominator, as the bench always wrote it). */
const shown = (a: number, b: number) => (b === 0 ? 0 : round2(a / b));
/** A target's reading of a ÷ b: the value, and the measured text (two digits, then `detail`). */
const ratioReading = (a: number, b: number, detail: string) => ({
  value: a / b,
  measured: `${shown(a, b)} (${detail})`,
});
const of = (r: BenchReport, series: Series) => r.phases.filter((p) => p.series === series);
const some = (phases: Phase[]) => (phases.length > 0 ? phases : undefined);
const maxTrips = (list: readonly Phase[]) => Math.max(0, ...list.map((p) => p.redisRoundTrips));
/** The most Redis round trips of each of two row lists, as a target reads them ("a / b"). */
const tripsReading = (first: readonly Phase[], second: readonly Phase[]): Reading => {
  const a = maxTrips(first);
  const b = maxTrips(second);
  return { value: Math.max(a, b), measured: `${a} / ${b}` };
};
/** The rows of two series, undefined unless both have run. */
const bothSeries = (r: BenchReport, first: Series, second: Series) => {
  const a = some(of(r, first));
  const b = some(of(r, second));
  return a === undefined || b === undefined ? undefined : ([a, b] as const);
};
const halfPeakOf = (r: BenchReport, series: Series) =>
  r.checks?.halfPeaks.find((p) => p.series === series);
/** An errors target's reading: the errors of `list`; undefined when its phases have not run. */
const errorsReading = (list: readonly Phase[] | undefined): Reading | undefined => {
  if (list === undefined) {
    return undefined;
  }
  const errors = list.reduce((n, p) => n + p.errors, 0);
  return { value: errors, measured: String(errors) };
};

/** The REST create peak and the leanest event loop per create (concurrency > 1). */
function restCreate(r: BenchReport) {
  const phases = some(of(r, "REST create"));
  const peak = phases === undefined ? undefined : peakPhase(phases);
  if (phases === undefined || peak === undefined) {
    return undefined;
  }
  // What one process can serve when it has cores for its thread pool: the
  // event loop is its only serial part (signatures are checked on the pool),
  // so its CPU per REST create at its busiest bounds the process, whatever a
  // load generator sharing the machine manages.
  const leanestLoopUs = Math.min(
    ...phases.filter((p) => p.concurrency > 1).map((p) => p.eventLoopCpuUsPerRequest),
  );
  return {
    phases,
    peak: peak.throughput,
    peakConcurrency: peak.concurrency,
    leanestLoopUs,
    capacity: Math.round(1e6 / Math.max(1, leanestLoopUs)),
  };
}

/** A target's read that needs the REST create rows: undefined until they are there. */
function withRestCreate(
  read: (rest: NonNullable<ReturnType<typeof restCreate>>, r: BenchReport) => Reading | undefined,
): (r: BenchReport) => Reading | undefined {
  return (r) => {
    const rest = restCreate(r);
    return rest === undefined ? undefined : read(rest, r);
  };
}

function floorRatio(r: BenchReport, series: Series): Reading | undefined {
  const phases = some(of(r, series));
  const floor = some(of(r, "Floor check"));
  if (phases === undefined || floor === undefined) {
    return undefined;
  }
  const peak = peakPhase(phases);
  const throughput = peak?.throughput ?? 0;
  const floorPeak = peakPhase(floor)?.throughput ?? 0;
  return {
    value: floorPeak > 0 ? throughput / floorPeak : Number.NaN,
    measured: `${shown(throughput, floorPeak)} (${throughput}/s at concurrency ${peak?.concurrency ?? 0} vs ${floorPeak}/s)`,
  };
}

function checkHalfPeak(r: BenchReport, series: Series): Reading | undefined {
  const half = halfPeakOf(r, series);
  if (half === undefined) {
    return undefined;
  }
  const floorHalf = halfPeakOf(r, "Floor check");
  return {
    value: half.ok > 0 ? half.p99Ms : Number.NaN,
    measured: `${half.p99Ms} ms at ${half.throughput}/s${floorHalf === undefined ? "" : ` (the check floor at half its peak: ${floorHalf.p99Ms} ms at ${floorHalf.throughput}/s)`}`,
  };
}

/** The peer phase's point of a protocol and concurrency (gRPC over 4 connections, not over one). */
const peerPoint = (r: BenchReport, protocol: PeerPoint["protocol"], c: number) =>
  r.peer?.points.find(
    (p) => p.protocol === protocol && p.concurrency === c && p.connections === undefined,
  );

/** Ours ÷ the peer's throughput or p99 at a peer point; undefined when it has not run. */
function peerPointRatio(
  r: BenchReport,
  protocol: PeerPoint["protocol"],
  c: number,
  measure: "throughput" | "p99Ms",
): Reading | undefined {
  const point = peerPoint(r, protocol, c);
  if (point === undefined) {
    return undefined;
  }
  const unit = measure === "throughput" ? "/s" : " ms";
  const ours = point.oursTaken[measure];
  const peer = point.peerTaken[measure];
  return ratioReading(ours, peer, `${ours}${unit} vs ${peer}${unit}`);
}

/** The peer phase's rows (issues 15 and 20): each side at its defaults, A B A B. */
const PEER_ROWS: {
  protocol: PeerPoint["protocol"];
  label: string;
  ratio: number;
  how: string;
}[] = [
  {
    protocol: "REST create",
    label: "REST create",
    ratio: 1.1,
    how: "Throughput of the better of this service's two alternating runs ÷ the better of the peer's, same raw HTTP/1.1 client and pre-signed requests.",
  },
  {
    protocol: "gRPC create",
    label: "gRPC create",
    ratio: 1,
    how: "Throughput of the better of two alternating runs each, same raw HTTP/2 client (4 connections, pre-framed requests).",
  },
  {
    protocol: "Forward-auth",
    label: "Forward-auth",
    ratio: 1,
    how: "GET /auth with a bearer token, each side on 2,000 live tokens it created itself; the better of two alternating runs each, same raw HTTP/1.1 client.",
  },
  {
    protocol: "gRPC introspect",
    label: "IntrospectToken",
    ratio: 1,
    how: "IntrospectToken over gRPC, each side on 2,000 live tokens it created itself; the better of two alternating runs each, same raw HTTP/2 client (4 connections).",
  },
];

/** The peer phase's runs of this service for `protocol`. */
const peerRunsOf = (r: BenchReport, protocol: PeerPoint["protocol"]) =>
  r.peer?.points
    .filter((p) => p.protocol === protocol && p.connections === undefined)
    .flatMap((p) => p.ours);

function loadGeneratorShare(r: BenchReport, protocol: PeerPoint["protocol"]): Reading | undefined {
  const runs = r.peer === undefined ? undefined : some(peerRunsOf(r, protocol) ?? []);
  if (runs === undefined) {
    return undefined;
  }
  const share = (p: Phase) =>
    p.serviceCpuUsPerRequest > 0
      ? p.loadGeneratorCpuUsPerRequest / p.serviceCpuUsPerRequest
      : Number.NaN;
  const worst = runs.reduce((a, b) => (!(share(a) >= share(b)) ? b : a));
  return {
    value: share(worst),
    measured: `${shown(worst.loadGeneratorCpuUsPerRequest, worst.serviceCpuUsPerRequest)} (${worst.loadGeneratorCpuUsPerRequest} µs vs ${worst.serviceCpuUsPerRequest} µs, worst of this service's runs, at concurrency ${worst.concurrency})`,
  };
}

const CHECK_SERIES: readonly Series[] = [
  "gRPC introspect",
  "gRPC introspect, 1 connection",
  "Forward-auth",
  "Floor check",
  "Floor check gRPC",
  "Floor check gRPC, 1 connection",
];

/** The concurrencies of issue 27's targets. */
const TARGET_CONCURRENCIES: readonly number[] = PEER_CONCURRENCIES;

/**
 * Issue 27's table, one row per path: the service against its own floor
 * (each run as WORKERS processes, the same load) and against the Go peer.
 */
const PATH_ROWS: {
  protocol: PeerPoint["protocol"];
  label: string;
  series: Series;
  floor: Series;
  floorText: string;
  peerRatio: number;
}[] = [
  {
    protocol: "gRPC introspect",
    label: "IntrospectToken",
    series: "gRPC introspect",
    floor: "Floor check gRPC",
    floorText:
      "bench/check-floor-server.ts over h2c gRPC: raw stream, one Redis GET, the answer and its trailers",
    peerRatio: 0.75,
  },
  {
    protocol: "Forward-auth",
    label: "Forward-auth",
    series: "Forward-auth",
    floor: "Floor check",
    floorText: "bench/check-floor-server.ts over HTTP/1.1: one Redis GET, 200",
    peerRatio: 1,
  },
  {
    protocol: "gRPC create",
    label: "gRPC create",
    series: "gRPC create",
    floor: "Floor gRPC create",
    floorText:
      "the ladder's gRPC create floor: raw stream, envelope, protobuf decode, the verify, one EVALSHA of the real create script, the answer and its trailers",
    peerRatio: 0.85,
  },
  {
    protocol: "REST create",
    label: "REST create",
    series: "REST create",
    floor: "Floor create",
    floorText:
      "bench/floor-server.ts: node:http, JSON.parse, the verify, one EVALSHA, the JSON answer",
    peerRatio: 1.1,
  },
];

/** The error-free peak of `series` over the targets' concurrencies. */
const targetPeak = (r: BenchReport, series: Series) =>
  peakPhase(of(r, series).filter((p) => TARGET_CONCURRENCIES.includes(p.concurrency)));

/** The better of the peer phase's points over the targets' concurrencies, each side's own peak. */
function peerPeaks(r: BenchReport, protocol: PeerPoint["protocol"]) {
  const points = r.peer?.points.filter(
    (p) =>
      p.protocol === protocol &&
      p.connections === undefined &&
      TARGET_CONCURRENCIES.includes(p.concurrency),
  );
  if (points === undefined || points.length === 0) {
    return undefined;
  }
  return {
    ours: peakPhase(points.map((p) => p.oursTaken)),
    peer: peakPhase(points.map((p) => p.peerTaken)),
  };
}

const PATH_TARGETS: readonly TargetSpec[] = PATH_ROWS.flatMap(
  ({ protocol, label, series, floor, floorText, peerRatio }): TargetSpec[] => [
    {
      name: `${label} vs its floor (issue 27)`,
      goal: { compare: "≥", value: 0.85, digits: 2, unit: "× floor" },
      how: `Peak of the service (no errors, concurrency 8, 32 or 64) ÷ the floor's peak under the same load, the floor (${floorText}), as many processes as the service has workers.`,
      read(r) {
        const atTargets = (name: Series) =>
          of(r, name).filter((p) => TARGET_CONCURRENCIES.includes(p.concurrency));
        // Not measured: a run before issue 27 ran no floor at these concurrencies.
        if (atTargets(series).length === 0 || atTargets(floor).length === 0) {
          return undefined;
        }
        // Rows with errors only: no peak, so the target is unmet.
        const ours = targetPeak(r, series);
        const theirs = targetPeak(r, floor);
        const a = ours?.throughput ?? 0;
        const b = theirs?.throughput ?? 0;
        return {
          value: b > 0 ? a / b : Number.NaN,
          measured: `${shown(a, b)} (${a}/s at concurrency ${ours?.concurrency ?? "–"} vs ${b}/s at ${theirs?.concurrency ?? "–"})`,
        };
      },
    },
    {
      name: `${label} vs the Go peer (issue 27)`,
      goal: { compare: "≥", value: peerRatio, digits: 2, unit: "× peer" },
      how: "Peak of this service's better runs at concurrency 8, 32 and 64 ÷ the peer's, the peer phase's alternating runs (A B A B), same client.",
      read(r) {
        const peaks = peerPeaks(r, protocol);
        if (peaks === undefined) {
          return undefined;
        }
        const a = peaks.ours?.throughput ?? 0;
        const b = peaks.peer?.throughput ?? 0;
        return {
          value: b > 0 ? a / b : Number.NaN,
          measured: `${shown(a, b)} (${a}/s at concurrency ${peaks.ours?.concurrency ?? "–"} vs ${b}/s at ${peaks.peer?.concurrency ?? "–"})`,
        };
      },
    },
    {
      name: `${label} p99 at concurrency 32 vs the Go peer's (issue 27)`,
      goal: { compare: "≤", value: 1.5, digits: 2, unit: "× peer's p99" },
      how: "p99 of the run taken for each side (the better of two alternating runs) at concurrency 32.",
      read: (r) => peerPointRatio(r, protocol, 32, "p99Ms"),
    },
  ],
);

/** Every target of `npm run bench`, each goal written once: the check and the report come from here. */
export const TARGETS: readonly TargetSpec[] = [
  ...PATH_TARGETS,
  {
    name: "REST create vs verify ceiling",
    goal: { compare: "≥", value: 0.6, digits: 2, unit: "× ceiling" },
    how: "Peak REST create throughput over the concurrencies ÷ Ed25519 verifies per second on one thread, measured in the same run.",
    read: withRestCreate((rest, r) => {
      const ceiling = r.verifyCeiling.perSecond;
      return ratioReading(rest.peak, ceiling, `${rest.peak}/s vs ${ceiling}/s`);
    }),
  },
  {
    name: "REST create capacity of one process with cores for its thread pool (1 s ÷ event-loop CPU per request) vs verify ceiling",
    goal: { compare: "≥", value: 0.6, digits: 2, unit: "× ceiling" },
    how: "1 s ÷ the least event-loop CPU per REST create (concurrency above 1): what one process serves when the verifies have cores of their own.",
    read: withRestCreate((rest, r) =>
      ratioReading(
        rest.capacity,
        r.verifyCeiling.perSecond,
        `${rest.capacity}/s: ${rest.leanestLoopUs} µs of event-loop CPU per request`,
      ),
    ),
  },
  {
    name: "Everything but the signature check (event-loop CPU per REST create) vs one verify",
    goal: { compare: "≤", value: 1, unit: "× verify" },
    how: "The least event-loop CPU per REST create ÷ the time of one verify.",
    read: withRestCreate((rest, r) => {
      const us = r.verifyCeiling.microseconds;
      return ratioReading(rest.leanestLoopUs, us, `${rest.leanestLoopUs} µs vs ${us} µs`);
    }),
  },
  {
    name: "REST create vs Connect create",
    goal: { compare: "≥", value: 0.9, digits: 2 },
    how: "Peak REST create ÷ peak Connect create (JSON), same load generator.",
    read: withRestCreate((rest, r) => {
      const connect = some(of(r, "Connect create"));
      if (connect === undefined) {
        return undefined;
      }
      const connectPeak = peakPhase(connect)?.throughput ?? 0;
      return ratioReading(rest.peak, connectPeak, `${rest.peak}/s vs ${connectPeak}/s`);
    }),
  },
  {
    name: "REST create vs the floor server (REST create peak vs the floor at that concurrency)",
    goal: { compare: "≥", value: 0.85, digits: 2, unit: "× floor" },
    how: "Peak REST create ÷ bench/floor-server.ts under the same load at the concurrency of that peak.",
    read: withRestCreate((rest, r) => {
      if (r.floor === undefined) {
        return undefined;
      }
      return {
        value: r.floor.throughput > 0 ? rest.peak / r.floor.throughput : Number.NaN,
        measured: `${shown(rest.peak, r.floor.throughput)} (${rest.peak}/s vs ${r.floor.throughput}/s at concurrency ${r.floor.concurrency})`,
      };
    }),
  },
  {
    name: "p99 at half of peak (REST create)",
    goal: { compare: "≤", value: 10, unit: "ms" },
    how: "REST create paced at half its peak (open model, latency from when each request was due).",
    read(r) {
      const half = r.halfPeak;
      if (half === undefined) {
        return undefined;
      }
      const floor = r.floorHalfPeak;
      return {
        value: half.p99Ms,
        measured: `${half.p99Ms} ms at ${half.throughput}/s${floor === undefined ? "" : ` (the floor at half its peak: ${floor.p99Ms} ms at ${floor.throughput}/s)`}`,
      };
    },
  },
  {
    name: "Redis round trips per create / delete",
    goal: { compare: "≤", value: 2 },
    how: "Client-issued Redis commands per request (INFO commandstats deltas), the most of any REST create and REST delete phase.",
    read(r) {
      const both = bothSeries(r, "REST create", "REST delete");
      return both === undefined ? undefined : tripsReading(...both);
    },
  },
  {
    name: "No leak (RSS after the last step vs after the first, on the least-squares line through every step)",
    goal: { compare: "≤", value: 1.1, digits: 2 },
    how: "REST creates in equal steps, the service's RSS after each; the least-squares line read at the first and the last step.",
    read(r) {
      const leak = r.leak;
      if (leak === undefined) {
        return undefined;
      }
      const trend = rssTrend(leak.requests, leak.rssMb);
      return {
        value: trend.ratio,
        measured: `${trend.ratio} (${trend.firstMb} → ${trend.lastMb} MB, ${leak.requests[0]} → ${leak.requests[leak.requests.length - 1]} requests)`,
      };
    },
  },
  {
    name: "Redis memory per live session token",
    goal: { compare: "≤", value: 250, unit: "B" },
    how: "INFO memory before and after writing session and named tokens through the real store code, once the creates' replay entries have expired.",
    read(r) {
      const m = r.memory;
      return m === undefined
        ? undefined
        : {
            value: m.sessionBytesPerTokenSteady,
            measured: `${m.sessionBytesPerTokenSteady} B (named ${m.namedBytesPerTokenSteady} B)`,
          };
    },
  },
  {
    name: "IntrospectToken (gRPC) vs the check floor (peaks)",
    goal: { compare: "≥", value: 0.7, digits: 2, unit: "× floor" },
    how: "Peak IntrospectToken ÷ the check floor's peak (bench/check-floor-server.ts).",
    read: (r) => floorRatio(r, "gRPC introspect"),
  },
  {
    name: "Forward-auth (HTTP/1.1 keep-alive) vs the check floor (peaks)",
    goal: { compare: "≥", value: 0.7, digits: 2, unit: "× floor" },
    how: "Peak forward-auth ÷ the check floor's peak, same load generator.",
    read: (r) => floorRatio(r, "Forward-auth"),
  },
  {
    name: "p99 at half of its own peak (IntrospectToken)",
    goal: { compare: "≤", value: 5, unit: "ms" },
    how: "IntrospectToken paced at half its own peak (the raw HTTP/2 client, open model).",
    read: (r) => checkHalfPeak(r, "gRPC introspect"),
  },
  {
    name: "p99 at half of its own peak (forward-auth)",
    goal: { compare: "≤", value: 5, unit: "ms" },
    how: "Forward-auth paced at half its own peak (the paced raw HTTP/1.1 client).",
    read: (r) => checkHalfPeak(r, "Forward-auth"),
  },
  {
    name: "Redis round trips per check (IntrospectToken / forward-auth)",
    goal: { compare: "≤", value: 1 },
    how: "Client-issued Redis commands per check, the most of any phase, closed loop and half peak.",
    read(r) {
      const both = bothSeries(r, "gRPC introspect", "Forward-auth");
      if (both === undefined) {
        return undefined;
      }
      const withHalf = (list: Phase[], series: Series) => {
        const half = halfPeakOf(r, series);
        return half === undefined ? list : [...list, half];
      };
      return tripsReading(withHalf(both[0], "gRPC introspect"), withHalf(both[1], "Forward-auth"));
    },
  },
  {
    name: "Load generator CPU per IntrospectToken vs the service's, at its peak (the client must not be the limit)",
    goal: { compare: "<", value: 0.2, digits: 2 },
    how: "The bench process's CPU per call ÷ the service's, at IntrospectToken's peak.",
    read(r) {
      const introspect = some(of(r, "gRPC introspect"));
      const peak = introspect === undefined ? undefined : peakPhase(introspect);
      if (peak === undefined) {
        return undefined;
      }
      const clientUs = peak.loadGeneratorCpuUsPerRequest;
      const serviceUs = peak.serviceCpuUsPerRequest;
      return {
        value: serviceUs > 0 ? clientUs / serviceUs : Number.NaN,
        measured: `${shown(clientUs, serviceUs)} (${clientUs} µs vs ${serviceUs} µs)`,
      };
    },
  },
  {
    name: "Errors (check phases)",
    goal: { compare: "=", value: 0 },
    how: "Failed checks (anything but an active answer) in IntrospectToken, forward-auth and the check floor, closed loop and half peak.",
    read: (r) =>
      errorsReading(
        r.checks && [
          ...r.phases.filter((p) => CHECK_SERIES.includes(p.series)),
          ...r.checks.halfPeaks,
        ],
      ),
  },
  ...PEER_CONCURRENCIES.flatMap((c): TargetSpec[] =>
    PEER_ROWS.flatMap(({ protocol, label, ratio, how }): TargetSpec[] => [
      {
        name: `${label} vs the Go peer's, concurrency ${c}`,
        goal: { compare: "≥", value: ratio, digits: 2, unit: "× peer" },
        how,
        read: (r) => peerPointRatio(r, protocol, c, "throughput"),
      },
      {
        name: `${label} p99 vs the Go peer's, concurrency ${c}`,
        goal: { compare: "≤", value: 1, digits: 2, unit: "× peer's p99" },
        how: "p99 of the run taken for each side (the better of two).",
        read: (r) => peerPointRatio(r, protocol, c, "p99Ms"),
      },
    ]),
  ),
  {
    name: "Load generator CPU per REST create vs the service's (peer phase)",
    goal: { compare: "<", value: 0.2, digits: 2 },
    how: "The bench process's CPU per request ÷ the service's, the worst of this service's REST create runs in the peer phase.",
    read: (r) => loadGeneratorShare(r, "REST create"),
  },
  {
    name: "Load generator CPU per gRPC create vs the service's (peer phase)",
    goal: { compare: "<", value: 0.2, digits: 2 },
    how: "As above, for gRPC create.",
    read: (r) => loadGeneratorShare(r, "gRPC create"),
  },
  {
    name: "Errors in the peer comparison (both sides)",
    goal: { compare: "=", value: 0 },
    how: "Anything but 201 with a token (REST create), grpc-status 0 with a message (gRPC create, IntrospectToken) or 200 (forward-auth), both sides, every run.",
    read: (r) => errorsReading(r.peer?.points.flatMap((p) => [...p.ours, ...p.peer])),
  },
  {
    name: "Errors (all phases)",
    goal: { compare: "=", value: 0 },
    how: "Failed requests in every phase of this service and the floors, closed loop and half peak.",
    read: (r) =>
      errorsReading([
        ...r.phases,
        ...[r.halfPeak, r.floor, r.floorHalfPeak].filter((p) => p !== undefined),
        ...(r.checks?.halfPeaks ?? []),
      ]),
  },
];

/** The target table of a run, and the names of the targets its phases could not tell. */
export function evaluateTargets(
  r: BenchReport,
  specs: readonly TargetSpec[] = TARGETS,
): { targets: Target[]; notMeasured: string[] } {
  const targets: Target[] = [];
  const notMeasured: string[] = [];
  for (const spec of specs) {
    const reading = spec.read(r);
    if (reading === undefined) {
      notMeasured.push(spec.name);
      continue;
    }
    targets.push({
      name: spec.name,
      goal: goalText(spec.goal),
      how: spec.how,
      measured: reading.measured,
      met: goalMet(spec.goal, reading.value),
    });
  }
  return { targets, notMeasured };
}
