import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { allowedFrom, DEFAULT_GRANTS, tokenGrants } from "../../../src/store/token-grants.js";

describe("token grants", () => {
  it("no scopes and no list stored: the one shared default (read, trade, anywhere)", () => {
    assert.equal(tokenGrants([], []), DEFAULT_GRANTS);
    assert.equal(tokenGrants(["trade", "read"], []), DEFAULT_GRANTS);
    assert.deepEqual(DEFAULT_GRANTS.scopes, ["read", "trade"]);
    assert.equal(allowedFrom(DEFAULT_GRANTS, undefined), true);
  });

  it("scopes stored are read in TOKEN_SCOPES' order", () => {
    assert.deepEqual(tokenGrants(["withdraw", "read"], ["10.0.0.0/8"]).scopes, [
      "read",
      "withdraw",
    ]);
    assert.deepEqual(tokenGrants(["read"], []).scopes, ["read"]);
  });

  it("an allow-list admits only addresses inside it, and fails closed without one", () => {
    const grants = tokenGrants(["read"], ["203.0.113.7", "2001:db8::/32"]);
    assert.equal(allowedFrom(grants, "203.0.113.7"), true);
    assert.equal(allowedFrom(grants, "::ffff:203.0.113.7"), true);
    assert.equal(allowedFrom(grants, "2001:db8:1::5"), true);
    assert.equal(allowedFrom(grants, "203.0.113.8"), false);
    assert.equal(allowedFrom(grants, undefined), false);
    assert.equal(allowedFrom(grants, ""), false);
    assert.equal(allowedFrom(grants, "203.0.113.7, 10.0.0.1"), false);
  });

  it("a stored entry that does not parse matches nothing", () => {
    const grants = tokenGrants(["read"], ["not an address"]);
    assert.equal(allowedFrom(grants, "127.0.0.1"), false);
    assert.equal(allowedFrom(grants, "::1"), false);
  });
});
