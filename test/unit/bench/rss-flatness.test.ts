import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { rssFlatness } from "../../../bench/rss-flatness.js";

const opts = { warmup: 2, tolerance: 0.15 };

describe("rssFlatness", () => {
  it("leaves the warm-up out: a jump while warming is not growth", () => {
    const verdict = rssFlatness([134, 347, 347, 348, 347, 348], opts);
    assert.deepEqual(verdict.judged, [347, 348, 347, 348]);
    assert.equal(verdict.flat, true);
    assert.equal(verdict.ratio, 1.003);
  });

  it("calls flat what the garbage collector swings within 15 %", () => {
    assert.equal(rssFlatness([100, 300, 300, 340, 310, 345], opts).flat, true);
  });

  it("calls a steady growth what it is, once it passes 15 % (issue 40's worker)", () => {
    const verdict = rssFlatness([130, 374, 464, 550, 646, 718, 823], opts);
    assert.equal(verdict.flat, false);
    assert.equal(verdict.lowMb, 464);
    assert.equal(verdict.highMb, 823);
    assert.equal(verdict.ratio, 1.774);
  });

  it("counts a fall and a rise alike: the spread is what is judged", () => {
    assert.equal(rssFlatness([100, 100, 400, 300], opts).flat, false);
    assert.equal(rssFlatness([100, 100, 300, 346], opts).flat, false);
    assert.equal(rssFlatness([100, 100, 300, 345], opts).flat, true);
  });

  it("refuses to judge fewer than two samples after the warm-up", () => {
    assert.throws(() => rssFlatness([100, 200, 300], opts), /at least two/);
  });
});
