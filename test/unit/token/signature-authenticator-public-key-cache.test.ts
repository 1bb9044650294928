import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createPublicKeyCache } from "../../../src/token/signature-authenticator.js";

describe("createPublicKeyCache", () => {
  it("remembers each user's keys until told to forget them", () => {
    const cache = createPublicKeyCache(10);
    cache.set("u1", ["k1", "k2"]);
    cache.set("u2", ["k3"]);
    assert.deepEqual(cache.get("u1"), ["k1", "k2"]);
    assert.deepEqual(cache.get("u2"), ["k3"]);
    assert.equal(cache.get("u3"), undefined);
    cache.delete("u1");
    assert.equal(cache.get("u1"), undefined);
    assert.equal(cache.size, 1);
  });

  it("holds at most maxUsers users, the oldest out first", () => {
    const cache = createPublicKeyCache(2);
    cache.set("u1", ["k1"]);
    cache.set("u2", ["k2"]);
    cache.set("u3", ["k3"]);
    assert.equal(cache.size, 2);
    assert.equal(cache.get("u1"), undefined);
    assert.deepEqual(cache.get("u3"), ["k3"]);
  });

  it("replaces a user's keys in place, pushing no one out", () => {
    const cache = createPublicKeyCache(2);
    cache.set("u1", ["k1"]);
    cache.set("u2", ["k2"]);
    cache.set("u1", ["k1", "k4"]);
    assert.deepEqual(cache.get("u1"), ["k1", "k4"]);
    assert.deepEqual(cache.get("u2"), ["k2"]);
  });
});
