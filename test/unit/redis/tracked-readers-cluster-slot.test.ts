import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clusterSlotOf } from "../../../src/redis/tracked-readers.js";

// Expected slots as `CLUSTER KEYSLOT` answers them (Redis' documentation examples).
describe("clusterSlotOf", () => {
  it("hashes the whole key without a hash tag", () => {
    assert.equal(clusterSlotOf("somekey"), 11058);
    assert.equal(clusterSlotOf("foo"), 12182);
  });

  it("hashes only the first non-empty {…} hash tag", () => {
    assert.equal(clusterSlotOf("foo{hash_tag}"), 2515);
    assert.equal(clusterSlotOf("{hash_tag}bar"), 2515);
    // An empty tag does not count: the whole key is hashed.
    assert.notEqual(clusterSlotOf("{}foo"), clusterSlotOf("foo"));
  });
});
