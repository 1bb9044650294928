import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createTokenMessage } from "@perps/token-client/protocol";
import { addressesOf, createGrants } from "../../../src/console/create-grants.js";

// The create form's Scopes and Allowed addresses as the request's fields; the
// page that reads them off its checkboxes is test/integration/console-grants.test.ts.
describe("createGrants", () => {
  it("asks for nothing when the form is as it opens: the request and its message are the seed's", () => {
    const grants = createGrants(["read", "trade"], "  ");
    assert.deepEqual(grants, {});
    const fields = {
      timestamp: 1n,
      expiresIn: 60n,
      name: "bot",
      userId: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
    };
    assert.equal(
      Buffer.from(createTokenMessage({ ...fields, ...grants })).toString(),
      "createToken:1:60:bot:0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
    );
    // The order of the boxes, not of the clicks.
    assert.deepEqual(createGrants(["trade", "read"], ""), {});
  });

  it("any other choice: the scopes in their order, the addresses as typed", () => {
    assert.deepEqual(createGrants(["read"], ""), { scopes: ["read"] });
    assert.deepEqual(createGrants(["withdraw", "read"], "203.0.113.7, 2001:db8::/32\n10.0.0.0/8"), {
      scopes: ["read", "withdraw"],
      allowedIps: ["203.0.113.7", "2001:db8::/32", "10.0.0.0/8"],
    });
    // Addresses alone keep the default scopes, which the service gives.
    assert.deepEqual(createGrants(["read", "trade"], "198.51.100.1"), {
      allowedIps: ["198.51.100.1"],
    });
  });

  it("refuses what the service would, in the form's words", () => {
    assert.throws(() => createGrants([], ""), /^Error: Scopes: choose at least one$/);
    assert.throws(() => createGrants(["admin"], ""), /^Error: Scopes: "admin" is not a scope$/);
    assert.throws(
      () => createGrants(["withdraw"], ""),
      /^Error: Scopes: withdraw needs allowed addresses$/,
    );
    assert.throws(
      () => createGrants(["read"], "203.0.113.7 10.0.0.1/8"),
      /^Error: Allowed addresses: "10\.0\.0\.1\/8" is not an IPv4 or IPv6 address or a CIDR prefix/,
    );
    assert.throws(
      () => createGrants(["read"], "203.0.113.7,203.0.113.7"),
      /^Error: Allowed addresses: "203\.0\.113\.7" is there twice$/,
    );
    const many = Array.from({ length: 21 }, (_, i) => `192.0.2.${i}`).join(" ");
    assert.throws(
      () => createGrants(["read"], many),
      /^Error: Allowed addresses: at most 20, there are 21$/,
    );
    assert.equal(
      createGrants(["read"], many.split(" ").slice(0, 20).join(" ")).allowedIps?.length,
      20,
    );
  });
});

describe("addressesOf", () => {
  it("splits on spaces, commas and new lines, and drops empty entries", () => {
    assert.deepEqual(addressesOf(" 203.0.113.7,,2001:db8::1 \n\t10.0.0.0/8, "), [
      "203.0.113.7",
      "2001:db8::1",
      "10.0.0.0/8",
    ]);
    assert.deepEqual(addressesOf(""), []);
  });
});
