import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hostAllowed, hostOf, servesAuthority } from "../../../src/server/host-guard.js";

describe("host guard", () => {
  it("reads the host of an authority: lowercase, without port, brackets or final dot", () => {
    assert.equal(hostOf("Evil.Example:9090"), "evil.example");
    assert.equal(hostOf("evil.example."), "evil.example");
    assert.equal(hostOf("[::1]:9090"), "::1");
    assert.equal(hostOf("[::1]"), "::1");
    assert.equal(hostOf("127.0.0.1"), "127.0.0.1");
    assert.equal(hostOf("localhost:"), "localhost", "RFC 3986 allows an empty port");
    assert.equal(hostOf("tokens_internal:9090"), "tokens_internal");
  });

  // Issue 34, item 10: these were read as a host and served.
  it("reads no host from a malformed authority: forms no browser sends", () => {
    for (const authority of [
      "[::1]evil.example",
      "[::1]:evil.example",
      "[::1",
      "[::1]:9090:1",
      "[127.0.0.1]",
      "[fe80::1%25eth0]",
      "::1",
      "127.0.0.1:evil.example",
      "127.0.0.1:9090:9091",
      "127.0.0.1:123456",
      "127.0.0.1:-1",
      "user@127.0.0.1",
      "127.0.0.1/evil",
      "127.0.0.1 evil.example",
      "127.0.0.1\\evil.example",
      "127..0.1",
      ".localhost",
      "",
      ":9090",
    ]) {
      assert.equal(hostOf(authority), undefined, authority);
    }
  });

  it("a malformed authority is served by no listener, not even one that answers to every name", () => {
    for (const authority of ["[::1]evil.example", "[::1", "127.0.0.1:evil.example", "::1"]) {
      assert.equal(servesAuthority(["127.0.0.1"], authority), false, authority);
      assert.equal(servesAuthority(undefined, authority), false, authority);
    }
    assert.equal(servesAuthority(["127.0.0.1"], "[::1]:9090"), true);
    assert.equal(servesAuthority(undefined, "api.example.com"), true);
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
