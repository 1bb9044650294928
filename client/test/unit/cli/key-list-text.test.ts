import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { keyListText } from "../../../src/cli/key-list-text.js";
import { liveTokensText } from "../../../src/cli/live-tokens-text.js";

const KEY_A = "a".repeat(64);
const KEY_B = "b".repeat(64);
const FINGERPRINT = `SHA256:${"x".repeat(43)}`;

describe("list-keys text", () => {
  it("says so when the user has no key", () => {
    assert.equal(keyListText([]), "No keys.");
  });

  it("is a table of added time, fingerprint and key, with unknown dates spelled out", () => {
    const text = keyListText([
      { publicKey: KEY_A, fingerprint: FINGERPRINT, addedAtMs: Date.UTC(2026, 10, 25, 9, 30) },
      { publicKey: KEY_B, fingerprint: FINGERPRINT, addedAtMs: undefined },
    ]);
    assert.equal(
      text,
      [
        `ADDED (UTC)               FINGERPRINT${" ".repeat(41)}PUBLIC KEY`,
        `2026-11-25T09:30:00.000Z  ${FINGERPRINT}  ${KEY_A}`,
        `unknown                   ${FINGERPRINT}  ${KEY_B}`,
      ].join("\n"),
    );
  });

  it("counts revoked tokens in words", () => {
    assert.equal(liveTokensText(0), "0 live tokens");
    assert.equal(liveTokensText(1), "1 live token");
    assert.equal(liveTokensText(2), "2 live tokens");
  });
});
