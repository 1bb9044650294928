import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { serviceCredentialCheck } from "../../../src/admin-auth/service-credential.js";

describe("serviceCredentialCheck", () => {
  it("off: every caller goes on, anonymous", () => {
    const check = serviceCredentialCheck(undefined);
    assert.equal(check(undefined), "");
    assert.equal(check("anything"), "");
  });

  it("on: the known service's secret names it; none, another, or two headers are refused", () => {
    const check = serviceCredentialCheck((secret) => (secret === "s3cret" ? "edge" : undefined));
    assert.equal(check("s3cret"), "edge");
    assert.equal(check(" s3cret "), "edge");
    for (const value of [undefined, null, "", "wrong", ["s3cret", "s3cret"]]) {
      assert.equal(check(value), false, JSON.stringify(value));
    }
  });
});
