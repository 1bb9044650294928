import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createBoundedCache } from "../../../src/cache/bounded-cache.js";

describe("createBoundedCache", () => {
  it("keeps at most its size, forgetting the oldest entry first", () => {
    const cache = createBoundedCache<string, number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    assert.equal(cache.get("a"), 1); // A read does not renew "a".
    cache.set("c", 3);
    assert.equal(cache.get("a"), undefined);
    assert.equal(cache.get("b"), 2);
    assert.equal(cache.get("c"), 3);
  });

  it("replaces a key's value without forgetting another entry", () => {
    const cache = createBoundedCache<string, number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("a", 10);
    assert.equal(cache.get("a"), 10);
    assert.equal(cache.get("b"), 2);
  });

  it("forgets a deleted key, making room for another", () => {
    const cache = createBoundedCache<string, number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.delete("a");
    cache.set("c", 3);
    assert.equal(cache.get("a"), undefined);
    assert.equal(cache.get("b"), 2);
    assert.equal(cache.get("c"), 3);
  });
});
