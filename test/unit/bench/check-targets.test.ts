import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Phase, Series } from "../../../bench/bench-report.js";
import { type CheckRun, checkTargets, peakPhase } from "../../../bench/check-targets.js";

function phase(series: Series, concurrency: number, fields: Partial<Phase> = {}): Phase {
  return {
    series,
    concurrency,
    throughput: 1000,
    p50Ms: 1,
    p90Ms: 2,
    p99Ms: 3,
    sent: 1000,
    ok: 1000,
    errors: 0,
    failures: {},
    seconds: 1,
    rssBeforeMb: 100,
    rssAfterMb: 100,
    redisRoundTrips: 1,
    redisCommands: {},
    serviceCpuUsPerRequest: 100,
    eventLoopCpuUsPerRequest: 80,
    loadGeneratorCpuUsPerRequest: 10,
    redisCpuUsPerRequest: 10,
    ...fields,
  };
}

/** A run that meets every goal; tests change one thing at a time. */
function goodRun(changes: Partial<CheckRun> = {}): CheckRun {
  return {
    introspect: [
      phase("gRPC introspect", 8, { throughput: 7000 }),
      phase("gRPC introspect", 32, { throughput: 8000 }),
    ],
    forwardAuth: [phase("Forward-auth", 32, { throughput: 9000 })],
    floor: [
      phase("Floor check", 8, { throughput: 9000 }),
      phase("Floor check", 32, { throughput: 10000 }),
    ],
    introspectHalfPeak: phase("gRPC introspect", 64, { throughput: 4000, p99Ms: 4 }),
    forwardAuthHalfPeak: phase("Forward-auth", 64, { throughput: 4500, p99Ms: 2 }),
    floorHalfPeak: phase("Floor check", 64, { throughput: 5000, p99Ms: 1 }),
    ...changes,
  };
}

const metOf = (run: CheckRun) =>
  Object.fromEntries(checkTargets(run).map((t) => [t.name, t.met] as const));

describe("peakPhase", () => {
  it("picks the phase of highest throughput", () => {
    assert.equal(peakPhase(goodRun().floor)?.concurrency, 32);
    assert.equal(peakPhase([]), undefined);
  });
});

describe("checkTargets", () => {
  it("meets every goal for a good run, comparing peaks with the floor's peak", () => {
    const targets = checkTargets(goodRun());
    assert.ok(targets.every((t) => t.met));
    const introspect = targets.find((t) => t.name.startsWith("IntrospectToken (gRPC)"));
    assert.equal(introspect?.measured, "0.8 (8000/s at concurrency 32 vs 10000/s)");
  });

  it("misses the floor ratio below 0.7 × the floor's peak", () => {
    const run = goodRun({ forwardAuth: [phase("Forward-auth", 32, { throughput: 6999 })] });
    const met = metOf(run);
    assert.equal(met["Forward-auth (HTTP/1.1 keep-alive) vs the check floor (peaks)"], false);
    assert.equal(met["IntrospectToken (gRPC) vs the check floor (peaks)"], true);
  });

  it("misses the tail goal above 5 ms at half peak", () => {
    const met = metOf(
      goodRun({ introspectHalfPeak: phase("gRPC introspect", 64, { p99Ms: 5.001 }) }),
    );
    assert.equal(met["p99 at half of its own peak (IntrospectToken)"], false);
    assert.equal(met["p99 at half of its own peak (forward-auth)"], true);
  });

  it("misses the round-trip goal when any check phase needs more than one", () => {
    const run = goodRun({
      forwardAuthHalfPeak: phase("Forward-auth", 64, { redisRoundTrips: 1.5 }),
    });
    assert.equal(metOf(run)["Redis round trips per check (IntrospectToken / forward-auth)"], false);
  });

  it("misses when the load generator costs a fifth of the service or more", () => {
    const heavy = goodRun({
      introspect: [phase("gRPC introspect", 32, { loadGeneratorCpuUsPerRequest: 20 })],
    });
    const name =
      "Load generator CPU per IntrospectToken vs the service's, at its peak (the client must not be the limit)";
    assert.equal(metOf(heavy)[name], false);
  });

  it("counts the errors of every check phase, the floor's included", () => {
    const run = goodRun({ floorHalfPeak: phase("Floor check", 64, { errors: 2 }) });
    const errors = checkTargets(run).find((t) => t.name === "Errors (check phases)");
    assert.deepEqual(errors && [errors.measured, errors.met], ["2", false]);
  });

  it("never meets a ratio against a floor that served nothing", () => {
    const run = goodRun({ floor: [phase("Floor check", 32, { throughput: 0 })] });
    assert.equal(metOf(run)["IntrospectToken (gRPC) vs the check floor (peaks)"], false);
  });
});
