import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as ed from "@noble/ed25519";
import { checkEd25519PublicKey } from "../../../src/crypto/ed25519-verifier.js";

// The eight points of small order (canonical encodings), from "Taming the many EdDSAs".
const SMALL_ORDER = [
  "0100000000000000000000000000000000000000000000000000000000000000",
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "0000000000000000000000000000000000000000000000000000000000000000",
  "0000000000000000000000000000000000000000000000000000000000000080",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
];

// y >= p: non-canonical spellings (p = 2^255 - 19 is edff..7f).
const NON_CANONICAL = [
  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
];

describe("checkEd25519PublicKey", () => {
  for (const key of SMALL_ORDER) {
    it(`refuses small-order key ${key.slice(0, 8)}…${key.slice(-2)}`, () => {
      assert.equal(checkEd25519PublicKey(key).ok, false);
    });
  }
  for (const key of NON_CANONICAL) {
    it(`refuses non-canonical key ${key.slice(0, 8)}…${key.slice(-2)}`, () => {
      assert.equal(checkEd25519PublicKey(key).ok, false);
    });
  }

  it("refuses bad text with a reason", () => {
    for (const key of [
      "",
      "AB".repeat(32),
      "ab".repeat(31),
      "ab".repeat(33),
      `0x${"ab".repeat(31)}`,
    ]) {
      const check = checkEd25519PublicKey(key);
      assert.equal(check.ok, false);
      assert.match(check.ok ? "" : check.reason, /64 lowercase hex/);
    }
  });

  it("refuses a y that is not on the curve", () => {
    // y = 2 has no matching x on edwards25519.
    const check = checkEd25519PublicKey(`02${"00".repeat(31)}`);
    assert.deepEqual(check, { ok: false, reason: "is not a canonical encoding of a curve point" });
  });

  it("accepts real keys", async () => {
    for (let i = 0; i < 5; i++) {
      const { publicKey } = await ed.keygenAsync();
      assert.deepEqual(checkEd25519PublicKey(Buffer.from(publicKey).toString("hex")), { ok: true });
    }
  });

  it("the identity-key forgery is real: a lax verifier accepts it for any message", async () => {
    const identity = SMALL_ORDER[0] ?? "";
    // R = identity, S = 0.
    const forged = new Uint8Array(Buffer.from(`${identity}${"00".repeat(32)}`, "hex"));
    const message = new TextEncoder().encode(
      "createToken:1:::00000000-0000-0000-0000-000000000000",
    );
    const key = new Uint8Array(Buffer.from(identity, "hex"));
    // noble's default (ZIP215) rules accept it: this is why such keys never get registered.
    assert.equal(await ed.verifyAsync(forged, message, key), true);
    assert.equal(checkEd25519PublicKey(identity).ok, false);
  });
});
