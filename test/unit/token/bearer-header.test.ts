import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bearerTokenOf } from "../../../src/token/bearer-header.js";

describe("bearerTokenOf", () => {
  const token = "pt_AbC-_9.~+/xyz";

  it("takes what follows the Bearer scheme, in any case, after spaces", () => {
    assert.equal(bearerTokenOf(`Bearer ${token}`), token);
    assert.equal(bearerTokenOf(`bearer ${token}`), token);
    assert.equal(bearerTokenOf(`BEARER ${token}`), token);
    assert.equal(bearerTokenOf(`bEaReR   ${token}`), token);
    assert.equal(bearerTokenOf(`Bearer\t${token}`), token);
    assert.equal(bearerTokenOf("Bearer abc=="), "abc==");
  });

  it("a Bearer header with a malformed or empty token presents that token (an invalid one, not none)", () => {
    for (const [value, presented] of [
      ["Bearer", ""],
      ["Bearer ", ""],
      [`Bearer ${token} extra`, `${token} extra`],
      [`Bearer ${token},`, `${token},`],
      [`Bearer "${token}"`, `"${token}"`],
      ["Bearer =abc", "=abc"],
      ["Bearer pt_ü", "pt_ü"],
    ] as const) {
      assert.equal(bearerTokenOf(value), presented, value);
    }
  });

  it("no header, or another scheme, presents no bearer token", () => {
    for (const value of [
      undefined,
      null,
      "",
      `Basic ${token}`,
      `Bearer${token}`,
      `Token ${token}`,
      `Bearers ${token}`,
      `XBearer ${token}`,
    ]) {
      assert.equal(bearerTokenOf(value), undefined, String(value));
    }
  });
});
