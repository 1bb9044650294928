import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TrackedReader } from "../../../src/redis/tracked-reader.js";
import { createInFlightReads } from "../../../src/store/token-record-cache.js";

// A pair only for its epoch: nothing here reads from it.
const pair = (epoch: number): TrackedReader => ({
  up: true,
  epoch,
  ended: false,
  read: () => Promise.resolve(null),
  close() {},
});

describe("createInFlightReads", () => {
  it("a read starts clean, in its pair's epoch", () => {
    const reads = createInFlightReads();
    const read = reads.start("perps:{u1}:token:a", pair(4));
    assert.deepEqual(
      { key: read.key, epoch: read.epoch, poisoned: read.poisoned, settled: read.settled },
      { key: "perps:{u1}:token:a", epoch: 4, poisoned: false, settled: false },
    );
  });

  it("poisons every read of a key, and only of that key", () => {
    const reads = createInFlightReads();
    const first = reads.start("k1", pair(1));
    const second = reads.start("k1", pair(1));
    const other = reads.start("k2", pair(1));
    reads.poison("k1");
    assert.deepEqual([first.poisoned, second.poisoned, other.poisoned], [true, true, false]);
  });

  it("a settled read is no longer poisoned by its key's change", () => {
    const reads = createInFlightReads();
    const settled = reads.start("k1", pair(1));
    const open = reads.start("k1", pair(1));
    reads.settle(settled);
    reads.poison("k1");
    assert.deepEqual([settled.settled, settled.poisoned], [true, false]);
    assert.deepEqual([open.settled, open.poisoned], [false, true]);
  });

  it("poisons by prefix (a user's keys) and all at once (a loss)", () => {
    const reads = createInFlightReads();
    const mine = reads.start("perps:{u1}:token:a", pair(1));
    const theirs = reads.start("perps:{u2}:token:b", pair(1));
    reads.poisonPrefix("perps:{u1}:");
    assert.deepEqual([mine.poisoned, theirs.poisoned], [true, false]);
    reads.poisonAll();
    assert.equal(theirs.poisoned, true);
  });

  it("forgets settled reads: a later read of the key starts clean", () => {
    const reads = createInFlightReads();
    reads.settle(reads.start("k1", pair(1)));
    reads.poisonAll();
    assert.equal(reads.start("k1", pair(2)).poisoned, false);
  });
});
