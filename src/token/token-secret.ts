import { createHash, hash } from "node:crypto";
import { crc32 } from "node:zlib";
import { randomText } from "./random-text.js";

/** Prefix of every bearer token, so that secret scanners can recognise a leaked one. */
export const TOKEN_PREFIX = "pt_";
const SECRET_BYTES = 32;
const ID_BYTES = 12;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const CHECKSUM_LENGTH = 6;
// pt_ + 43 base64url characters (256 bits) + 6 base62 characters of CRC32.
const TOKEN_SHAPE = /^pt_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/;

function base62(value: number, width: number): string {
  let out = "";
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62.charAt(rest % 62) + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH);
}

/** A new bearer token: prefix, 256 bits from the CSPRNG (base64url) and a CRC32 checksum. */
export function generateToken(): string {
  const body = TOKEN_PREFIX + randomText(SECRET_BYTES);
  return body + checksum(body);
}

/** True when `token` has our prefix, shape and a matching checksum (an offline check only). */
export function isWellFormedToken(token: string): boolean {
  if (!TOKEN_SHAPE.test(token)) {
    return false;
  }
  const body = token.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === token.slice(-CHECKSUM_LENGTH);
}

/**
 * Bytes of a token's SHA-256 that are stored: 224 bits are far beyond any
 * preimage search, and 28 raw bytes keep the token's Redis value a compact
 * string (embstr, at most 44 bytes) in jemalloc's 48-byte class.
 */
export const TOKEN_DIGEST_BYTES = 28;

/** What is stored instead of the token: its SHA-256 cut to {@link TOKEN_DIGEST_BYTES} raw bytes. */
export function tokenDigest(token: string): Buffer {
  return hash("sha256", token, "buffer").subarray(0, TOKEN_DIGEST_BYTES);
}

// Domain separation: these ids are no other hash of the message.
const TOKEN_ID_TAG = "perps.token.v1 token id\0";

/**
 * The id of the token a signed create makes: 96 bits of SHA-256 over a
 * domain tag and the SHA-256 of the signed message, base64url (16
 * characters), opaque. Derived rather than random, so that a replay of an
 * accepted create can name the token it made without storing anything per
 * token (the store only checks whether that id's key exists). Ids are not
 * secrets (a delete must be signed); distinct messages collide with
 * probability 2⁻⁹⁶.
 */
export function tokenIdOf(messageDigest: Uint8Array): string {
  return createHash("sha256")
    .update(TOKEN_ID_TAG)
    .update(messageDigest)
    .digest()
    .toString("base64url", 0, ID_BYTES);
}
