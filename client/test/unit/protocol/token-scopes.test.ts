import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DEFAULT_SCOPE_MASK,
  isTokenScope,
  scopeMask,
  scopesOfMask,
  TOKEN_SCOPES,
} from "../../../src/protocol/token-scopes.js";

describe("token scopes", () => {
  it("one bit per scope, read back in the list's order", () => {
    assert.deepEqual(scopesOfMask(scopeMask(["withdraw", "read"])), ["read", "withdraw"]);
    assert.deepEqual(scopesOfMask(DEFAULT_SCOPE_MASK), ["read", "trade"]);
    assert.equal(scopeMask(TOKEN_SCOPES), 0b1111);
    assert.equal(scopeMask(["Read", "admin"]), 0);
  });

  it("knows its names, lowercase only", () => {
    assert.equal(isTokenScope("transfer"), true);
    assert.equal(isTokenScope("TRADE"), false);
  });
});
