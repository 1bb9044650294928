import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ladderMarkdown,
  type StepRun,
  summarizeLadder,
} from "../../../../bench/ladder/ladder-report.js";
import { LADDER_STEPS } from "../../../../bench/ladder/ladder-steps.js";

const run = (throughput: number, cpuUsPerRequest: number, errors = 0): StepRun => ({
  throughput,
  cpuUsPerRequest,
  p99Ms: 1,
  errors,
  failures: errors > 0 ? { transport: errors } : {},
});

describe("summarizeLadder", () => {
  const steps = LADDER_STEPS["forward-auth"].slice(0, 3);
  const result = summarizeLadder({
    path: "forward-auth",
    date: "2026-11-26T00:00:00.000Z",
    node: "v24",
    lookup: "memory",
    quick: true,
    concurrency: 32,
    rounds: 3,
    seconds: 2,
    steps,
    runs: [
      [run(10_000, 30), run(12_000, 28), run(1_000, 90)],
      [run(9_000, 40), run(8_000, 41), run(9_500, 39)],
      [run(8_000, 45), run(7_000, 47, 2), run(7_500, 46)],
    ],
  });

  it("takes each step's medians over the rounds: one disturbed round moves nothing", () => {
    assert.deepEqual(
      result.steps.map((s) => [s.throughput, s.cpuUsPerRequest, s.cpuUsRange]),
      [
        [10_000, 30, [28, 90]],
        [9_000, 40, [39, 41]],
        [7_500, 46, [45, 47]],
      ],
    );
  });

  it("prices each layer as the delta to the step below, and each step against the floor", () => {
    assert.deepEqual(
      result.steps.map((s) => [s.deltaUs, s.ofFloor]),
      [
        [0, 1],
        [10, 0.9],
        [6, 0.75],
      ],
    );
  });

  it("keeps a step's errors and shows its throughput as no peak", () => {
    assert.equal(result.steps[2]?.errors, 2);
    assert.match(ladderMarkdown(result), /\| 2 \| routing \| .* \| \(7,500, errors\) \|/);
  });

  it("says where the checks' records came from", () => {
    assert.match(ladderMarkdown(result), /checks' records from memory/);
  });
});

describe("LADDER_STEPS", () => {
  it("starts every path at its floor and ends it with the service", () => {
    for (const steps of Object.values(LADDER_STEPS)) {
      assert.equal(steps[0]?.layer, "floor");
      assert.equal(steps[steps.length - 1]?.layer, "service");
      assert.equal(new Set(steps.map((s) => s.layer)).size, steps.length);
    }
  });
});
