import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, TokenApiError } from "@perps/token-client";
import { errorText } from "../../../src/console/error-text.js";

// The console's words run in a browser, but are plain functions of the error:
// test/integration/console.test.ts shows them in the page's alert.
const named = (name: string, message: string) => Object.assign(new Error(message), { name });

describe("errorText", () => {
  it("a refused signature: the service's message and what the person can do", () => {
    assert.equal(
      errorText(
        new TokenApiError(Code.Unauthenticated, "Signature expired", { clockOffsetMs: 300_000 }),
      ),
      "Signature expired (this device's clock is 5.0 min ahead of the service's: set it right and try again)",
    );
    assert.equal(
      errorText(
        new TokenApiError(Code.Unauthenticated, "Signature expired", { clockOffsetMs: -90_000 }),
      ),
      "Signature expired (this device's clock is 90.0 s behind the service's: set it right and try again)",
    );
    assert.equal(
      errorText(new TokenApiError(Code.Unauthenticated, "Signature expired")),
      "Signature expired (this device's clock is more than 2 minutes off the service's: set it right and try again)",
    );
    assert.equal(
      errorText(new TokenApiError(Code.Unauthenticated, "Invalid signature")),
      "Invalid signature (this key is not registered for this User ID)",
    );
  });

  it("a limit or no answer: when to try again", () => {
    assert.equal(
      errorText(
        new TokenApiError(Code.ResourceExhausted, "Rate limit exceeded", { retryAfterSeconds: 7 }),
      ),
      "Rate limit exceeded (retry after 7 s)",
    );
    assert.equal(
      errorText(new TokenApiError(Code.Unavailable, "fetch failed")),
      "fetch failed (no answer: check the connection, or try again in a moment)",
    );
    assert.equal(
      errorText(new TokenApiError(Code.Unavailable, "Service unavailable", { httpStatus: 503 })),
      "Service unavailable",
    );
  });

  it("a refused form: each part about a field of the form in its words, in days", () => {
    const cases: [Code, string, string][] = [
      [
        Code.InvalidArgument,
        "expiresIn: must be at most 31536000 seconds; name: must be 1 to 128 characters; userId: is required",
        "Lifetime: at most 365 days; Name: must be 1 to 128 characters; userId: is required",
      ],
      [Code.InvalidArgument, "expiresIn: must be at most 86400 seconds", "Lifetime: at most 1 day"],
      [
        Code.InvalidArgument,
        "expiresIn: must be at most 129600 seconds",
        "Lifetime: at most 129600 seconds (1.50 days)",
      ],
      [
        Code.InvalidArgument,
        "expiresIn: must be greater than 0",
        "Lifetime: must be greater than 0",
      ],
      [
        Code.AlreadyExists,
        "name: a live token of this user already has this name",
        "Name: one of your live tokens already has this name",
      ],
      [
        Code.InvalidArgument,
        'allowedIps[2]: must be an IPv4 or IPv6 address; scopes: "withdraw" needs allowedIps: bind the token to your servers\' addresses',
        'Allowed addresses, entry 3: must be an IPv4 or IPv6 address; Scopes: "withdraw" needs allowedIps: bind the token to your servers\' addresses',
      ],
      [
        Code.InvalidArgument,
        "scopes[1]: must be in list [read, trade]",
        "Scopes: must be in list [read, trade]",
      ],
      [
        Code.InvalidArgument,
        "allowedIps: must hold unique items",
        "Allowed addresses: must hold unique items",
      ],
    ];
    for (const [code, said, shown] of cases) {
      assert.equal(errorText(new TokenApiError(code, said)), shown, said);
    }
    // Other codes keep the service's words as they are.
    assert.equal(
      errorText(new TokenApiError(Code.NotFound, "name: not reworded here")),
      "name: not reworded here",
    );
  });

  it("the key file's and the browser's own problems, never a stack", () => {
    assert.equal(
      errorText(new TypeError("cryptoKeyFromPem: not a PEM private key")),
      "Private key: not a PEM private key",
    );
    assert.equal(
      errorText(named("DataError", "invalid key data")),
      "Private key: this browser cannot import it (invalid key data)",
    );
    assert.equal(
      errorText(named("NotSupportedError", "Ed25519")),
      "This browser cannot sign with Ed25519 keys (WebCrypto): use a current Chrome, Edge, Firefox or Safari",
    );
    assert.equal(errorText(new TypeError("Failed to fetch")), "Failed to fetch");
    assert.equal(errorText("plain"), "plain");
  });
});
