import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hostAllowed, hostOf } from "../../../src/server/host-guard.js";

describe("host guard", () => {
  it("reads the host of an authority: lowercase, without port, brackets or final dot", () => {
    assert.equal(hostOf("Evil.Example:9090"), "evil.example");
    assert.equal(hostOf("evil.example."), "evil.example");
    assert.equal(hostOf("[::1]:9090"), "::1");
    assert.equal(hostOf("[::1]"), "::1");
    assert.equal(hostOf("::1"), "::1");
    assert.equal(hostOf("127.0.0.1"), "127.0.0.1");
  });

  it("allows loopback, localhost and the listed names; a wildcard bind admits IP literals, never names", () => {
    const names = ["127.0.0.1", "tokens.internal"];
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "localhost", "tokens.internal"]) {
      assert.equal(hostAllowed(host, names), true, host);
    }
    for (const host of [
      "evil.example",
      "10.0.0.5",
      "tokens.internal.evil.example",
      "localhost.evil",
    ]) {
      assert.equal(hostAllowed(host, names), false, host);
    }
    assert.equal(hostAllowed("10.0.0.5", ["0.0.0.0"]), true);
    assert.equal(hostAllowed("fd00::5", ["::"]), true);
    assert.equal(hostAllowed("evil.example", ["0.0.0.0"]), false);
  });
});
