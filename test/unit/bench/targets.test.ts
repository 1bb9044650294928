import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BenchReport, PeerPoint, Phase } from "../../../bench/bench-report.js";
import { evaluateTargets, goalMet, goalText } from "../../../bench/targets.js";
import { benchPhase } from "../../support/bench-phase.js";

/** What the check phases of one run measured. */
interface CheckRun {
  introspect: Phase[];
  forwardAuth: Phase[];
  floor: Phase[];
  introspectHalfPeak: Phase;
  forwardAuthHalfPeak: Phase;
  floorHalfPeak: Phase;
}

/** A report of a run of only the check phases. */
function reportOf(run: CheckRun, extra: Partial<BenchReport> = {}): BenchReport {
  return {
    date: "2026-01-01T00:00:00.000Z",
    quick: false,
    ran: ["checks", "check-floor"],
    machine: { cpus: 2, cpuModel: "test", node: "v20", redis: "7", pinned: false },
    verifyCeiling: { perSecond: 7000, microseconds: 142.9 },
    phases: [...run.introspect, ...run.forwardAuth, ...run.floor],
    checks: {
      users: 1000,
      sessionTokens: 5000,
      namedTokens: 5000,
      halfPeaks: [run.introspectHalfPeak, run.forwardAuthHalfPeak, run.floorHalfPeak],
    },
    targets: [],
    notMeasured: [],
    ...extra,
  };
}

const checkTargets = (run: CheckRun) => evaluateTargets(reportOf(run)).targets;

/** A run that meets every goal; tests change one thing at a time. */
function goodRun(changes: Partial<CheckRun> = {}): CheckRun {
  return {
    introspect: [
      benchPhase("gRPC introspect", 8, { throughput: 7000 }),
      benchPhase("gRPC introspect", 32, { throughput: 8000 }),
    ],
    forwardAuth: [benchPhase("Forward-auth", 32, { throughput: 9000 })],
    floor: [
      benchPhase("Floor check", 8, { throughput: 9000 }),
      benchPhase("Floor check", 32, { throughput: 10000 }),
    ],
    introspectHalfPeak: benchPhase("gRPC introspect", 64, { throughput: 4000, p99Ms: 4 }),
    forwardAuthHalfPeak: benchPhase("Forward-auth", 64, { throughput: 4500, p99Ms: 2 }),
    floorHalfPeak: benchPhase("Floor check", 64, { throughput: 5000, p99Ms: 1 }),
    ...changes,
  };
}

const metOf = (run: CheckRun) =>
  Object.fromEntries(checkTargets(run).map((t) => [t.name, t.met] as const));

describe("evaluateTargets: the token checks", () => {
  it("meets every goal for a good run, comparing peaks with the floor's peak", () => {
    const targets = checkTargets(goodRun());
    assert.ok(targets.every((t) => t.met));
    const introspect = targets.find((t) => t.name.startsWith("IntrospectToken (gRPC)"));
    assert.equal(introspect?.measured, "0.8 (8000/s at concurrency 32 vs 10000/s)");
  });

  it("misses the floor ratio below 0.7 × the floor's peak", () => {
    const run = goodRun({ forwardAuth: [benchPhase("Forward-auth", 32, { throughput: 6999 })] });
    const met = metOf(run);
    assert.equal(met["Forward-auth (HTTP/1.1 keep-alive) vs the check floor (peaks)"], false);
    assert.equal(met["IntrospectToken (gRPC) vs the check floor (peaks)"], true);
  });

  it("misses the tail goal above 5 ms at half peak", () => {
    const met = metOf(
      goodRun({ introspectHalfPeak: benchPhase("gRPC introspect", 64, { p99Ms: 5.001 }) }),
    );
    assert.equal(met["p99 at half of its own peak (IntrospectToken)"], false);
    assert.equal(met["p99 at half of its own peak (forward-auth)"], true);
  });

  it("misses the round-trip goal when any check phase needs more than one", () => {
    const run = goodRun({
      forwardAuthHalfPeak: benchPhase("Forward-auth", 64, { redisRoundTrips: 1.5 }),
    });
    assert.equal(metOf(run)["Redis round trips per check (IntrospectToken / forward-auth)"], false);
  });

  it("misses when the load generator costs a fifth of the service or more", () => {
    const heavy = goodRun({
      introspect: [benchPhase("gRPC introspect", 32, { loadGeneratorCpuUsPerRequest: 20 })],
    });
    const name =
      "Load generator CPU per IntrospectToken vs the service's, at its peak (the client must not be the limit)";
    assert.equal(metOf(heavy)[name], false);
  });

  it("counts the errors of every check phase, the floor's included", () => {
    const run = goodRun({ floorHalfPeak: benchPhase("Floor check", 64, { errors: 2 }) });
    const errors = checkTargets(run).find((t) => t.name === "Errors (check phases)");
    assert.deepEqual(errors && [errors.measured, errors.met], ["2", false]);
  });

  it("never meets a ratio against a floor that served nothing", () => {
    const run = goodRun({ floor: [benchPhase("Floor check", 32, { throughput: 0 })] });
    assert.equal(metOf(run)["IntrospectToken (gRPC) vs the check floor (peaks)"], false);
  });
});

describe("goals", () => {
  it("give the goal's text and its check from one value", () => {
    assert.equal(
      goalText({ compare: "≥", value: 0.6, digits: 2, unit: "× ceiling" }),
      "≥ 0.60 × ceiling",
    );
    assert.equal(goalText({ compare: "=", value: 0 }), "0");
    assert.equal(goalMet({ compare: "<", value: 0.2 }, 0.2), false);
    assert.equal(goalMet({ compare: "≤", value: 10 }, 10), true);
    assert.equal(goalMet({ compare: "≥", value: 1 }, Number.NaN), false);
  });
});

/** A peer point where this service serves `ours` and the peer `theirs` per second (the better of two runs). */
function point(
  protocol: PeerPoint["protocol"],
  c: number,
  ours: number,
  theirs: number,
): PeerPoint {
  const series = protocol === "REST create" ? "Peer REST create" : "Peer gRPC create";
  const a = [
    benchPhase(protocol, c, { throughput: ours - 100 }),
    benchPhase(protocol, c, { throughput: ours }),
  ];
  const b = [
    benchPhase(series, c, { throughput: theirs }),
    benchPhase(series, c, { throughput: theirs - 50 }),
  ];
  return {
    protocol,
    concurrency: c,
    ours: a,
    peer: b,
    oursTaken: a[1] as Phase,
    peerTaken: b[0] as Phase,
  };
}

describe("evaluateTargets: the peer and partial runs", () => {
  it("lists the targets whose phases did not run instead of failing them", () => {
    const { targets, notMeasured } = evaluateTargets(reportOf(goodRun()));
    assert.ok(notMeasured.includes("REST create vs verify ceiling"));
    assert.ok(notMeasured.includes("REST create vs the Go peer's, concurrency 8"));
    assert.ok(targets.every((t) => !notMeasured.includes(t.name)));
  });

  it("compares each side's better run with the peer at each concurrency", () => {
    const peer = {
      binary: "peer",
      requests: 1000,
      points: [
        point("REST create", 8, 1100, 1000),
        point("REST create", 32, 1099, 1000),
        point("REST create", 64, 2000, 1000),
        point("gRPC create", 8, 1000, 1000),
        point("gRPC create", 32, 999, 1000),
        point("gRPC create", 64, 1000, 1000),
      ],
    };
    const met = Object.fromEntries(
      evaluateTargets(reportOf(goodRun(), { peer })).targets.map((t) => [t.name, t.met] as const),
    );
    assert.equal(met["REST create vs the Go peer's, concurrency 8"], true);
    assert.equal(met["REST create vs the Go peer's, concurrency 32"], false);
    assert.equal(met["gRPC create vs the Go peer's, concurrency 8"], true);
    assert.equal(met["gRPC create vs the Go peer's, concurrency 32"], false);
    assert.equal(met["Errors in the peer comparison (both sides)"], true);
  });

  it("counts the peer's errors too", () => {
    const failing = point("REST create", 8, 1100, 1000);
    failing.peer[1] = benchPhase("Peer REST create", 8, { errors: 3 });
    const { targets } = evaluateTargets(
      reportOf(goodRun(), { peer: { binary: "peer", requests: 1000, points: [failing] } }),
    );
    const errors = targets.find((t) => t.name === "Errors in the peer comparison (both sides)");
    assert.deepEqual(errors && [errors.measured, errors.met], ["3", false]);
  });
});

describe("evaluateTargets: issue 27's table", () => {
  const withPeer = (ours: number, theirs: number, oursP99 = 3, peerP99 = 3) => {
    const p = point("gRPC create", 32, ours, theirs);
    p.oursTaken = benchPhase("gRPC create", 32, { throughput: ours, p99Ms: oursP99 });
    p.peerTaken = benchPhase("Peer gRPC create", 32, { throughput: theirs, p99Ms: peerP99 });
    return { binary: "peer", requests: 1000, points: [p] };
  };
  const grpcCreateRun = (service: number, floor: number, extra: Partial<BenchReport> = {}) =>
    Object.fromEntries(
      evaluateTargets(
        reportOf(goodRun(), {
          phases: [
            benchPhase("gRPC create", 32, { throughput: service }),
            // Concurrency 128 is not a target's: its row does not count.
            benchPhase("gRPC create", 128, { throughput: 2 * floor }),
            benchPhase("Floor gRPC create", 64, { throughput: floor }),
          ],
          ...extra,
        }),
      ).targets.map((t) => [t.name, t] as const),
    );

  it("compares the service's peak with its own floor's at concurrency 8 to 64", () => {
    const met = grpcCreateRun(850, 1000);
    assert.equal(met["gRPC create vs its floor (issue 27)"]?.met, true);
    assert.equal(
      met["gRPC create vs its floor (issue 27)"]?.measured,
      "0.85 (850/s at concurrency 32 vs 1000/s at 64)",
    );
    assert.equal(grpcCreateRun(849, 1000)["gRPC create vs its floor (issue 27)"]?.met, false);
  });

  it("reads the 4-connection point, not the one-connection one, for the peer targets", () => {
    const peer = withPeer(900, 1000);
    const single = point("gRPC create", 32, 100, 1000);
    peer.points.unshift({ ...single, connections: 1 });
    const met = grpcCreateRun(900, 1000, { peer });
    assert.equal(met["gRPC create vs the Go peer (issue 27)"]?.measured.startsWith("0.9 "), true);
  });

  it("compares with the Go peer by each side's peak, and the p99 at concurrency 32", () => {
    const met = grpcCreateRun(900, 1000, { peer: withPeer(850, 1000, 4.5, 3) });
    assert.equal(met["gRPC create vs the Go peer (issue 27)"]?.met, true);
    assert.equal(met["gRPC create p99 at concurrency 32 vs the Go peer's (issue 27)"]?.met, true);
    const slow = grpcCreateRun(900, 1000, { peer: withPeer(849, 1000, 4.6, 3) });
    assert.equal(slow["gRPC create vs the Go peer (issue 27)"]?.met, false);
    assert.equal(slow["gRPC create p99 at concurrency 32 vs the Go peer's (issue 27)"]?.met, false);
  });
});
