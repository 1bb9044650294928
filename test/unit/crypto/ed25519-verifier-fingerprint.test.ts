import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { keyFingerprint } from "../../../src/crypto/ed25519-verifier.js";

describe("keyFingerprint", () => {
  it("is SHA256: and the base64 of the raw key's SHA-256, without padding", () => {
    // Worked out apart from the code: python3's hashlib and base64 on the same 32 bytes.
    assert.equal(
      keyFingerprint("00".repeat(32)),
      "SHA256:Zmh6rfhivXdsj8GLjp+OIAiXFIVu4jOzkCpZHQ1fKSU",
    );
    assert.equal(
      keyFingerprint("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"),
      "SHA256:Yw3NKWbEM2aRElRIu7JbT/QSpJxzLbLIq8G4WBvXEN0",
    );
  });

  it("reads the hex in either case, as the same key", () => {
    const key = "ab".repeat(32);
    assert.equal(keyFingerprint(key.toUpperCase()), keyFingerprint(key));
    assert.notEqual(keyFingerprint(key), keyFingerprint("ac".repeat(32)));
  });
});
