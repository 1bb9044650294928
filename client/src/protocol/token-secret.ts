import { createHash, hash } from "node:crypto";
import { crc32 } from "node:zlib";
import { randomInto } from "./random-text.js";
import { uuidBytes } from "./uuid-bytes.js";

/** Prefix of every bearer token, so that secret scanners can recognise a leaked one. */
export const TOKEN_PREFIX = "pt_";
const USER_BYTES = 16;
const ID_BYTES = 12;
const SECRET_BYTES = 32;
const BODY_BYTES = USER_BYTES + ID_BYTES + SECRET_BYTES;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const CHECKSUM_LENGTH = 6;
/**
 * pt_ + 80 base64url characters (60 bytes: the user's UUID, the token id,
 * 256 random bits) + 6 base62 characters of CRC32. 60 bytes are a whole
 * number of base64 groups, so every body has exactly one spelling.
 */
const TOKEN_SHAPE = /^pt_[A-Za-z0-9_-]{80}[0-9A-Za-z]{6}$/;
/** Length of a token in characters (89). */
export const TOKEN_LENGTH = TOKEN_PREFIX.length + (BODY_BYTES / 3) * 4 + CHECKSUM_LENGTH;

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

/**
 * A new bearer token of the user `userId` (UUID text, either case) for the
 * token `tokenId` (`tokenIdOf`): prefix, then base64url of the user's 16 UUID
 * bytes (those of its Redis hash tag), the id's 12 bytes and 256 bits from the
 * CSPRNG, then a CRC32 checksum. The token leads to its own record, so a check
 * is one read in the user's slot; only the 256 random bits are secret.
 */
export function generateToken(userId: string, tokenId: string): string {
  const id = Buffer.from(tokenId, "base64url");
  if (id.length !== ID_BYTES || id.toString("base64url") !== tokenId) {
    throw new Error("a token id is 12 bytes in base64url");
  }
  const bytes = Buffer.alloc(BODY_BYTES);
  uuidBytes(userId).copy(bytes, 0);
  id.copy(bytes, USER_BYTES);
  randomInto(bytes, USER_BYTES + ID_BYTES, SECRET_BYTES);
  const body = TOKEN_PREFIX + bytes.toString("base64url");
  // Only the token string keeps the secret.
  bytes.fill(0);
  return body + checksum(body);
}

/** True when `token` has our prefix, shape and a matching checksum (an offline check only). */
export function isWellFormedToken(token: string): boolean {
  if (token.length !== TOKEN_LENGTH || !TOKEN_SHAPE.test(token)) {
    return false;
  }
  const body = token.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === token.slice(-CHECKSUM_LENGTH);
}

/** Whose a token says it is and which record it names: nothing is verified yet. */
export interface ParsedToken {
  /** The user's UUID, lowercase (the form the user is stored under). */
  userId: string;
  /** The token's id (16 base64url characters). */
  tokenId: string;
}

/**
 * The user and token id a well-formed token carries, or undefined for
 * anything else (wrong prefix, length, characters or checksum). Offline and
 * cheap: the length is checked before anything else, so a huge string costs
 * nothing. Never throws. Says nothing about whether the token is live.
 */
export function parseToken(token: string): ParsedToken | undefined {
  if (typeof token !== "string" || !isWellFormedToken(token)) {
    return undefined;
  }
  const bytes = Buffer.from(token.slice(TOKEN_PREFIX.length, -CHECKSUM_LENGTH), "base64url");
  const hex = bytes.toString("hex", 0, USER_BYTES);
  const userId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const tokenId = bytes.toString("base64url", USER_BYTES, USER_BYTES + ID_BYTES);
  bytes.fill(0);
  return { userId, tokenId };
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
