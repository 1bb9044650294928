import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LoadTally } from "../../../bench/load-tally.js";

describe("LoadTally", () => {
  it("counts successes with their latencies and failures by label", () => {
    const tally = new LoadTally();
    for (let ms = 1; ms <= 100; ms++) {
      tally.success(ms);
    }
    tally.failure("grpc-14");
    tally.failure("grpc-14");
    tally.failure("transport");
    assert.equal(tally.answered, 103);
    assert.deepEqual(tally.result(110, 2), {
      throughput: 50,
      p50Ms: 50,
      p90Ms: 90,
      p99Ms: 99,
      sent: 110,
      ok: 100,
      errors: 3,
      failures: { "grpc-14": 2, transport: 1 },
      seconds: 2,
    });
  });

  it("reports an empty load as zeros", () => {
    const result = new LoadTally().result(0, 0);
    assert.equal(result.throughput, 0);
    assert.equal(result.p99Ms, 0);
    assert.deepEqual(result.failures, {});
  });
});
