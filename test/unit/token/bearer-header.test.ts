import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bearerTokenOf } from "../../../src/token/bearer-header.js";

describe("bearerTokenOf", () => {
  const token = "pt_AbC-_9.~+/xyz";

  it("takes the b64token after the Bearer scheme, in any case, after one or more spaces", () => {
    assert.equal(bearerTokenOf(`Bearer ${token}`), token);
    assert.equal(bearerTokenOf(`bearer ${token}`), token);
    assert.equal(bearerTokenOf(`BEARER ${token}`), token);
    assert.equal(bearerTokenOf(`bEaReR   ${token}`), token);
    assert.equal(bearerTokenOf("Bearer abc=="), "abc==");
  });

  it("anything else has no token", () => {
    for (const value of [
      undefined,
      null,
      "",
      "Bearer",
      "Bearer ",
      `Basic ${token}`,
      `Bearer${token}`,
      `Bearer\t${token}`,
      `Bearer ${token} extra`,
      `Bearer ${token},`,
      `Bearer "${token}"`,
      "Bearer =abc",
      "Bearer ab=c",
      `Bearer ${token}\n`,
      `Token ${token}`,
      `Bearers ${token}`,
      `XBearer ${token}`,
      "Bearer pt_ü",
    ]) {
      assert.equal(bearerTokenOf(value), undefined, String(value));
    }
  });
});
