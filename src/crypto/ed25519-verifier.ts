/**
 * Ed25519, which users sign their requests with: signatures verified on the
 * calling thread (createEd25519Verifier); then what a public key must be
 * before it is registered (checkEd25519PublicKey), and the fingerprint
 * operators know a registered key by (keyFingerprint).
 */

import { createHash, createPublicKey, type KeyObject, verify as opensslVerify } from "node:crypto";
import { createRequire } from "node:module";
import { Point } from "@noble/ed25519";
import { createBoundedCache } from "../cache/bounded-cache.js";

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows. */
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** Which library checks signatures. */
export type Ed25519Engine = "sodium" | "openssl";

export interface Ed25519VerifierOptions {
  /** How many parsed public keys to keep, so that hot keys skip parsing. Default 10000. */
  keyCacheSize?: number;
  /**
   * `sodium` (libsodium through sodium-native) verifies in about half the time
   * of `openssl` (node:crypto) on the machines measured (`npm run bench:verify`);
   * `openssl` is used where the sodium binding cannot load. Default: `sodium`
   * when it loads.
   */
  engine?: Ed25519Engine;
}

export interface Ed25519Verifier {
  /** The library in use. */
  readonly engine: Ed25519Engine;
  /**
   * True when `signature` is a valid Ed25519 signature of `message` under the
   * public key given as 64 lowercase hex characters. Never throws for bad input.
   */
  verify(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): boolean;
}

type SodiumVerify = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;

/** libsodium's detached verify, or undefined where the native binding cannot load. */
function loadSodiumVerify(): SodiumVerify | undefined {
  try {
    const sodium = createRequire(import.meta.url)("sodium-native") as {
      crypto_sign_verify_detached?: unknown;
    };
    const verify = sodium.crypto_sign_verify_detached;
    return typeof verify === "function" ? (verify as SodiumVerify) : undefined;
  } catch {
    return undefined;
  }
}

/** `parse(hex)`, remembered for the last `size` keys parsed (see BoundedCache). */
function remembered<V>(size: number, parse: (hex: string) => V): (hex: string) => V {
  const cache = createBoundedCache<string, V>(size);
  return (hex) => {
    let value = cache.get(hex);
    if (value === undefined) {
      value = parse(hex);
      cache.set(hex, value);
    }
    return value;
  };
}

/**
 * Verifies Ed25519 signatures on the calling thread. Both engines pass every
 * Wycheproof vector (S >= L, non-canonical and small-order encodings refused);
 * small-order keys are refused earlier anyway, when a key is registered. The
 * service runs one process per core, so a synchronous verify keeps every core
 * busy without a hop to libuv's thread pool.
 */
export function createEd25519Verifier(opts: Ed25519VerifierOptions = {}): Ed25519Verifier {
  const cacheSize = opts.keyCacheSize ?? 10_000;
  const sodiumVerify = opts.engine === "openssl" ? undefined : loadSodiumVerify();
  if (opts.engine === "sodium" && sodiumVerify === undefined) {
    throw new Error("sodium-native cannot be loaded on this platform");
  }
  if (sodiumVerify !== undefined) {
    const rawKey = remembered(cacheSize, (hex) => Buffer.from(hex, "hex"));
    return {
      engine: "sodium",
      verify(publicKeyHex, message, signature) {
        const key = rawKey(publicKeyHex);
        if (signature.length !== 64 || key.length !== 32) {
          return false;
        }
        return sodiumVerify(signature, message, key);
      },
    };
  }
  const keyObject = remembered(cacheSize, (hex): KeyObject | null => {
    try {
      return createPublicKey({
        key: Buffer.concat([SPKI_PREFIX, Buffer.from(hex, "hex")]),
        format: "der",
        type: "spki",
      });
    } catch {
      // A key OpenSSL cannot parse verifies nothing.
      return null;
    }
  });
  return {
    engine: "openssl",
    verify(publicKeyHex, message, signature) {
      const key = keyObject(publicKeyHex);
      if (signature.length !== 64 || key === null) {
        return false;
      }
      try {
        return opensslVerify(null, message, key, signature);
      } catch {
        return false;
      }
    },
  };
}

// The public keys users register.

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

/**
 * The fingerprint of an Ed25519 public key (64 hex characters): `SHA256:` and
 * the SHA-256 of its 32 raw bytes in base64 without padding, written as
 * OpenSSH writes its own (which hash a different encoding of the key, so the
 * two never match). An operator can work it out from a key file with
 * `openssl pkey -pubout -outform DER | tail -c 32 | openssl dgst -sha256 -binary | base64 | tr -d =`.
 */
export function keyFingerprint(publicKeyHex: string): string {
  const digest = createHash("sha256").update(Buffer.from(publicKeyHex, "hex")).digest("base64");
  return `SHA256:${digest.replace(/=+$/, "")}`;
}
