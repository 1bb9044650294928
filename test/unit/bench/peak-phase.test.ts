import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Phase } from "../../../bench/bench-report.js";
import { peakPhase } from "../../../bench/peak-phase.js";
import { benchPhase } from "../../support/bench-phase.js";

function phase(concurrency: number, throughput: number, errors = 0): Phase {
  return benchPhase("Floor check", concurrency, {
    throughput,
    ok: 1000 - errors,
    errors,
    failures: errors > 0 ? { transport: errors } : {},
  });
}

describe("peakPhase", () => {
  it("picks the phase of highest throughput", () => {
    assert.equal(peakPhase([phase(8, 9000), phase(32, 10_000), phase(64, 9500)])?.concurrency, 32);
    assert.equal(peakPhase([]), undefined);
  });

  it("never takes a row with errors as a peak", () => {
    const rows = [phase(128, 11_000, 1), phase(32, 10_000)];
    assert.equal(peakPhase(rows)?.concurrency, 32);
    assert.equal(peakPhase(rows.slice(0, 1)), undefined);
  });
});
