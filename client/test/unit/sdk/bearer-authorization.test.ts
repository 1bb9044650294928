import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { bearerAuthorization } from "../../../src/sdk/bearer-authorization.js";
import { TokenApiError } from "../../../src/sdk/token-api-error.js";

describe("bearerAuthorization", () => {
  it("presents a token as `Bearer <token>`, leaving what the service judges to the service", () => {
    assert.equal(bearerAuthorization("pt_AbC-_9"), "Bearer pt_AbC-_9");
    // Printable ASCII reaches the service, which answers for it.
    assert.equal(bearerAuthorization(""), "Bearer ");
    assert.equal(bearerAuthorization("a b~"), "Bearer a b~");
  });

  it('refuses a token no header can carry with the service\'s own UNAUTHENTICATED "Invalid token"', () => {
    for (const token of ["pt_a\nb", "pt_\r", "pt_\0", "pt_\t", "pt_é", "pt_\u{1F600}", "pt_\x7f"]) {
      assert.throws(
        () => bearerAuthorization(token),
        (err) =>
          err instanceof TokenApiError &&
          err.code === Code.Unauthenticated &&
          err.message === "Invalid token" &&
          err.httpStatus === undefined,
        JSON.stringify(token),
      );
    }
  });
});
