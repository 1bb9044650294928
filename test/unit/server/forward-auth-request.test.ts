import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { scopeMask } from "@perps/token-client/protocol";
import { clientAddress, routeScopes } from "../../../src/server/forward-auth-request.js";

describe("forward-auth request", () => {
  it("the route's scopes: every `scope` parameter, or the first that is no scope", () => {
    assert.deepEqual(routeScopes("/auth"), { mask: 0 });
    assert.deepEqual(routeScopes("/auth?x=1"), { mask: 0 });
    assert.deepEqual(routeScopes("/auth?scope=trade"), { mask: scopeMask(["trade"]) });
    assert.deepEqual(routeScopes("/auth/orders?scope=trade&x=1&scope=read"), {
      mask: scopeMask(["trade", "read"]),
    });
    assert.deepEqual(routeScopes("/auth?scope=Trade"), { unknown: "Trade" });
    assert.deepEqual(routeScopes("/auth?scope="), { unknown: "" });
  });

  it("the client's address: X-Real-IP, else the last of X-Forwarded-For", () => {
    assert.equal(clientAddress({}), undefined);
    assert.equal(clientAddress({ "x-real-ip": "203.0.113.7" }), "203.0.113.7");
    assert.equal(
      clientAddress({ "x-real-ip": "203.0.113.7", "x-forwarded-for": "10.0.0.1" }),
      "203.0.113.7",
    );
    assert.equal(clientAddress({ "x-forwarded-for": "198.51.100.1, 203.0.113.7" }), "203.0.113.7");
    assert.equal(clientAddress({ "x-forwarded-for": "203.0.113.7" }), "203.0.113.7");
    assert.equal(clientAddress({ "x-forwarded-for": "203.0.113.7, " }), undefined);
  });
});
