import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StoreError } from "../../../src/store/store-error.js";

describe("StoreError", () => {
  it("is an Error named StoreError that says its kind", () => {
    const err = new StoreError("unconfirmed-write");
    assert.ok(err instanceof Error);
    assert.equal(err.name, "StoreError");
    assert.equal(err.kind, "unconfirmed-write");
    assert.equal(err.message, "token store: unconfirmed-write");
  });

  it("carries the Redis failure behind it as its cause, and no cause without one", () => {
    const failure = new Error("Connection is closed.");
    assert.equal(new StoreError("unavailable", { cause: failure }).cause, failure);
    assert.equal("cause" in new StoreError("rejected"), false);
  });
});
