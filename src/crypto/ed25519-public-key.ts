import { Point } from "@noble/ed25519";

const PUBLIC_KEY_HEX = /^[0-9a-f]{64}$/;

/** Outcome of checking a public key before it may be registered. */
export type PublicKeyCheck = { ok: true } | { ok: false; reason: string };

/**
 * Checks that `hex` is a public key that can sign for a user: 64 lowercase hex
 * characters, a canonical encoding (y < p) of a point on the curve, and not of
 * small order. Small-order keys are refused because a lax verifier accepts
 * forged signatures for them (identity key, R = identity, S = 0 verifies any
 * message); non-canonical encodings are refused because two spellings of one
 * key would be two registrations of it.
 */
export function checkEd25519PublicKey(hex: string): PublicKeyCheck {
  if (!PUBLIC_KEY_HEX.test(hex)) {
    return { ok: false, reason: "must be 64 lowercase hex characters (32 bytes)" };
  }
  let point: Point;
  try {
    // zip215 = false: RFC 8032 strict decoding, which refuses y >= p.
    point = Point.fromHex(hex, false);
  } catch {
    return { ok: false, reason: "is not a canonical encoding of a curve point" };
  }
  if (point.isSmallOrder()) {
    return { ok: false, reason: "is a small-order point, which cannot be used safely" };
  }
  return { ok: true };
}
