import { TOKEN_DIGEST_BYTES } from "@perps/token-client/protocol";

/**
 * The value of a token's key, declared once: written by `encodeTokenRecord`
 * (the create script stores it as it is), read by `decodeTokenRecord` and,
 * for the name, by the delete script, which is handed the layout's numbers
 * from here (`TOKEN_RECORD_LAYOUT`).
 *
 * Layout 1: the token's digest, the byte 0x01, the instant it expires (Unix
 * ms, 8 bytes big-endian), then the name (none for a session token). The
 * expiry in the record lets a bearer check read the token with one GET.
 *
 * Layout 0 (tokens created before layout 1): the digest, then the name. A
 * name holds no control character (token.proto), so the byte after the
 * digest tells the two apart: 0x01 is layout 1, anything else a name.
 */
export const TOKEN_RECORD_LAYOUT = {
  digestBytes: TOKEN_DIGEST_BYTES,
  /** The byte after the digest that marks layout 1. */
  marker: 0x01,
  /** Bytes before the name in layout 1: digest, marker, expiry. */
  headBytes: TOKEN_DIGEST_BYTES + 1 + 8,
} as const;

/** A token's record as stored. */
export interface TokenRecord {
  /** `tokenDigest()` of the token. */
  digest: Buffer;
  /** "" for a session token. */
  name: string;
  /** When the token expires, in Unix ms; undefined for a layout 0 record, which does not say. */
  expiresAtMs: number | undefined;
}

/** The stored value of a token, layout 1. */
export function encodeTokenRecord(digest: Buffer, expiresAtMs: number, name: string): Buffer {
  const { digestBytes, marker, headBytes } = TOKEN_RECORD_LAYOUT;
  if (digest.length !== digestBytes) {
    throw new Error(`a token digest is ${digestBytes} bytes`);
  }
  const record = Buffer.allocUnsafe(headBytes + Buffer.byteLength(name));
  digest.copy(record, 0);
  record[digestBytes] = marker;
  record.writeBigUInt64BE(BigInt(expiresAtMs), digestBytes + 1);
  record.write(name, headBytes, "utf8");
  return record;
}

/** A stored value read back, either layout; undefined for one that is neither (too short). */
export function decodeTokenRecord(record: Buffer): TokenRecord | undefined {
  const { digestBytes, marker, headBytes } = TOKEN_RECORD_LAYOUT;
  if (record.length < digestBytes) {
    return undefined;
  }
  const digest = record.subarray(0, digestBytes);
  if (record.length > digestBytes && record[digestBytes] === marker) {
    if (record.length < headBytes) {
      return undefined;
    }
    return {
      digest,
      name: record.toString("utf8", headBytes),
      expiresAtMs: Number(record.readBigUInt64BE(digestBytes + 1)),
    };
  }
  return { digest, name: record.toString("utf8", digestBytes), expiresAtMs: undefined };
}
