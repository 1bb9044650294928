import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createBoundedCache } from "../../../src/cache/bounded-cache.js";

/** A full cache of two: "a" (the oldest), then "b". */
function fullCache() {
  const cache = createBoundedCache<string, number>(2);
  cache.set("a", 1);
  cache.set("b", 2);
  return cache;
}

describe("createBoundedCache", () => {
  it("keeps at most its size, forgetting the oldest entry first", () => {
    const cache = fullCache();
    assert.equal(cache.get("a"), 1); // A read does not renew "a".
    cache.set("c", 3);
    assert.deepEqual(["a", "b", "c"].map(cache.get), [undefined, 2, 3]);
  });

  it("replaces a key's value without forgetting another entry", () => {
    const cache = fullCache();
    cache.set("a", 10);
    assert.deepEqual(["a", "b"].map(cache.get), [10, 2]);
  });

  it("forgets a deleted key, making room for another", () => {
    const cache = fullCache();
    cache.delete("a");
    cache.set("c", 3);
    assert.deepEqual(["a", "b", "c"].map(cache.get), [undefined, 2, 3]);
  });

  it("deleteIf forgets the entries whose key passes, clear all; size counts them", () => {
    const cache = fullCache();
    cache.set("c", 3);
    assert.equal(cache.size, 2);
    cache.deleteIf((key) => key === "b");
    assert.deepEqual(["b", "c"].map(cache.get), [undefined, 3]);
    assert.equal(cache.size, 1);
    cache.clear();
    assert.equal(cache.size, 0);
    assert.equal(cache.get("c"), undefined);
  });
});
