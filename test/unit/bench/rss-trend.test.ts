import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { rssTrend } from "../../../bench/rss-trend.js";

const steps = [
  20_000, 40_000, 60_000, 80_000, 100_000, 120_000, 140_000, 160_000, 180_000, 200_000,
];

describe("rssTrend", () => {
  it("reads a flat RSS as no growth", () => {
    const trend = rssTrend(
      steps,
      steps.map(() => 150),
    );
    assert.deepEqual(trend, { firstMb: 150, lastMb: 150, ratio: 1 });
  });

  it("reads steady growth exactly", () => {
    // 100 MB after 20k requests, +5 MB per 20k: 145 MB after 200k.
    const trend = rssTrend(
      steps,
      steps.map((_, i) => 100 + 5 * i),
    );
    assert.deepEqual(trend, { firstMb: 100, lastMb: 145, ratio: 1.45 });
  });

  it("does not read a swing between single samples as a leak", () => {
    // The swing of a committed run: the last sample is 15% above the first, with no trend.
    const rss = [156, 179, 188, 165, 160, 189, 154, 194, 150, 179];
    const trend = rssTrend(steps, rss);
    assert.ok(trend.ratio < 1.05 && trend.ratio > 0.95, `ratio ${trend.ratio}`);
  });

  it("still sees a leak hidden under the swing", () => {
    const swing = [0, 20, -10, 15, -20, 10, -15, 20, -5, 0];
    const trend = rssTrend(
      steps,
      swing.map((s, i) => 150 + 4 * i + s),
    );
    assert.ok(trend.ratio > 1.2, `ratio ${trend.ratio}`);
  });

  it("uses only as many samples as both lists have, and survives none", () => {
    assert.deepEqual(rssTrend([], []), { firstMb: 0, lastMb: 0, ratio: 1 });
    assert.deepEqual(rssTrend([1, 2, 3], [100, 110]), { firstMb: 100, lastMb: 110, ratio: 1.1 });
  });
});
