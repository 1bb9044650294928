import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bearerToken } from "../../../src/cli/bearer-token.js";
import { introspectionText } from "../../../src/cli/introspection-text.js";
import { tokenListText } from "../../../src/cli/token-list-text.js";
import { UsageError } from "../../../src/cli/usage-error.js";
import { INACTIVE_INTROSPECTION } from "../../support/inactive-introspection.js";

describe("tokenListText", () => {
  it("a table of id, expiry and name, the name last", () => {
    assert.equal(
      tokenListText([
        { id: "-AbCdEfGhIjKlMnO", name: "my bot", expiresAt: "2026-11-21" },
        { id: "YAnc9iX83Ws3U0fL", name: "été", expiresAt: "2027-01-02" },
      ]),
      [
        "ID                EXPIRES (UTC)  NAME",
        "-AbCdEfGhIjKlMnO  2026-11-21     my bot",
        "YAnc9iX83Ws3U0fL  2027-01-02     été",
      ].join("\n"),
    );
  });

  it("says so when there are none", () => {
    assert.equal(tokenListText([]), "No named tokens.");
  });
});

describe("introspectionText", () => {
  const live = {
    active: true,
    userId: "479fa716-9730-4b3c-b0f5-82d7cf5c93b8",
    tokenId: "-0A-lf8-6YkvCUL5",
    name: "my-bot",
    expiresAt: "2026-11-23",
    expiresAtMs: Date.UTC(2026, 10, 23, 12, 35, 8, 789),
    scopes: ["read", "trade"],
  };

  it("a live token: each field on its line, the expiry exact", () => {
    assert.equal(
      introspectionText(live),
      [
        "active    yes",
        "user      479fa716-9730-4b3c-b0f5-82d7cf5c93b8",
        "token id  -0A-lf8-6YkvCUL5",
        "name      my-bot",
        `expires   2026-11-23T12:35:08.789Z (Unix ms ${live.expiresAtMs})`,
        "scopes    read,trade",
      ].join("\n"),
    );
  });

  it("a session token has no name", () => {
    assert.match(introspectionText({ ...live, name: "" }), /^name {6}\(none: a session token\)$/m);
  });

  it("a token that is not live: one line, no field", () => {
    assert.equal(
      introspectionText(INACTIVE_INTROSPECTION),
      "active    no (not a live token: malformed, unknown, expired or deleted)",
    );
  });
});

describe("bearerToken: the command line, else $PERPS_TOKEN", () => {
  it("the command line wins; the environment fills in; empty counts as none", () => {
    assert.equal(bearerToken("list", "pt_a", "--token TOKEN", { PERPS_TOKEN: "pt_b" }), "pt_a");
    assert.equal(bearerToken("list", undefined, "--token TOKEN", { PERPS_TOKEN: "pt_b" }), "pt_b");
    assert.equal(bearerToken("list", "", "--token TOKEN", { PERPS_TOKEN: "pt_b" }), "pt_b");
  });

  it("neither is a usage error naming both", () => {
    for (const env of [{}, { PERPS_TOKEN: "" }]) {
      assert.throws(
        () => bearerToken("list", undefined, "--token TOKEN", env),
        (err: unknown) =>
          err instanceof UsageError &&
          err.command === "list" &&
          err.message === "give the token as --token TOKEN or in $PERPS_TOKEN",
      );
    }
  });
});
