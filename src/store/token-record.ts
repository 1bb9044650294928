import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { TOKEN_DIGEST_BYTES } from "@perps/token-client/protocol";
import {
  type TokenRecord as StoredRecord,
  TokenRecordSchema,
} from "../gen/perps/tokenstore/v1/token_record_pb.js";
import { DEFAULT_GRANTS, type TokenGrants, tokenGrants } from "./token-grants.js";

/**
 * The value of a token's key. Its fields are declared once, by the message
 * TokenRecord (src/store/proto/perps/tokenstore/v1/token_record.proto): written by
 * `encodeTokenRecord`, read back by `decodeTokenRecord` (the bearer check:
 * digest, name, expiry, scopes and allow-list) and `tokenRecordExtras` (the listing: every other
 * field), and by the scripts through token-record.lua, which reads only the
 * name, by its field number (`TOKEN_RECORD_LUA_CONSTANTS`). A field added to
 * the message therefore changes no script and no code here.
 *
 * Layout 2: the token's digest, the byte 0x02, then TokenRecord in protobuf's
 * binary encoding. The digest stays a fixed head so that every layout starts
 * with it (a delete drops a legacy live member by its first bytes).
 *
 * Layout 1 (written before layout 2): the digest, the byte 0x01, the expiry
 * (Unix ms, 8 bytes big-endian), then the name. Layout 0: the digest, then
 * the name. A name holds no control character (token.proto), so the byte
 * after the digest tells the three apart. Both older layouts are still read
 * (their tokens may live for years) and never written.
 */
export const TOKEN_RECORD_LAYOUT = {
  digestBytes: TOKEN_DIGEST_BYTES,
  /** The byte after the digest that marks layout 2. */
  marker: 0x02,
  /** Bytes before the TokenRecord message in layout 2: digest, marker. */
  headBytes: TOKEN_DIGEST_BYTES + 1,
  /** The byte after the digest that marks layout 1. */
  layout1Marker: 0x01,
  /** Bytes before the name in layout 1: digest, marker, expiry. */
  layout1HeadBytes: TOKEN_DIGEST_BYTES + 1 + 8,
} as const;

/** What token-record.lua is told of the layout (`luaScript` constants). */
export const TOKEN_RECORD_LUA_CONSTANTS = {
  RECORD_DIGEST_BYTES: TOKEN_RECORD_LAYOUT.digestBytes,
  RECORD_MARKER: TOKEN_RECORD_LAYOUT.marker,
  RECORD_LAYOUT1_MARKER: TOKEN_RECORD_LAYOUT.layout1Marker,
  RECORD_LAYOUT1_HEAD_BYTES: TOKEN_RECORD_LAYOUT.layout1HeadBytes,
  RECORD_NAME_FIELD: TokenRecordSchema.field.name.number,
} as const;

/**
 * The stored fields besides the name and the expiry, which every layout
 * holds: what a field added to TokenRecord becomes (a record of an older
 * layout reads each as its default).
 */
export type TokenRecordExtras = Omit<
  StoredRecord,
  "$typeName" | "$unknown" | "name" | "expiresAtMs"
>;

/** What a record holds, as a create writes it. */
export interface TokenRecordFields {
  /** `tokenDigest()` of the token. */
  digest: Buffer;
  /** "" for a session token. */
  name: string;
  /** When the token expires, in Unix ms: the same instant as its key's PXAT. */
  expiresAtMs: number;
  /** The other stored fields; each one left out is stored as its default. */
  extras: Partial<TokenRecordExtras>;
}

/** A token's record as the bearer check reads it. */
export interface TokenRecord {
  /** `tokenDigest()` of the token. */
  digest: Buffer;
  /** "" for a session token. */
  name: string;
  /** When the token expires, in Unix ms; undefined for a layout 0 record, which does not say. */
  expiresAtMs: number | undefined;
  /** Its scopes and allow-list; the default ones for a record of an older layout. */
  grants: TokenGrants;
}

const MARKER = Buffer.of(TOKEN_RECORD_LAYOUT.marker);
const EXPIRES_AT_FIELD = TokenRecordSchema.field.expiresAtMs.number;
const NAME_FIELD = TokenRecordSchema.field.name.number;
const SCOPES_FIELD = TokenRecordSchema.field.scopes.number;
const ALLOWED_IPS_FIELD = TokenRecordSchema.field.allowedIps.number;
const NO_ENTRIES: readonly string[] = [];

/** The stored value of a token, layout 2. */
export function encodeTokenRecord(fields: TokenRecordFields): Buffer {
  if (fields.digest.length !== TOKEN_RECORD_LAYOUT.digestBytes) {
    throw new Error(`a token digest is ${TOKEN_RECORD_LAYOUT.digestBytes} bytes`);
  }
  const message = create(TokenRecordSchema, {
    ...fields.extras,
    name: fields.name,
    expiresAtMs: BigInt(fields.expiresAtMs),
  });
  return Buffer.concat([fields.digest, MARKER, toBinary(TokenRecordSchema, message)]);
}

// The bearer check decodes a record on every cache miss: a hand-written walk
// of the message's wire format, which allocates nothing but the answer (no
// reader, no message object), reads the fields it needs by their numbers
// and skips every other. `at` is the walk's position, shared to avoid
// returning pairs.
let at = 0;

/** The varint at `at` (exact below 2^53), moving past it; -1 when the record ends inside it. */
function varint(record: Buffer): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10 && at < record.length; i++) {
    const byte = record[at] ?? 0;
    at += 1;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      return value;
    }
    scale *= 128;
  }
  return -1;
}

/** The name, expiry and grants of a layout 2 record; undefined for one that is not well formed. */
function decodeLayout2(record: Buffer, digest: Buffer): TokenRecord | undefined {
  let name = "";
  let expiresAtMs = 0;
  let scopes = NO_ENTRIES;
  let allowedIps = NO_ENTRIES;
  at = TOKEN_RECORD_LAYOUT.headBytes;
  while (at < record.length) {
    const tag = varint(record);
    if (tag < 0) {
      return undefined;
    }
    const field = Math.floor(tag / 8);
    switch (tag % 8) {
      case 0: {
        const value = varint(record);
        if (value < 0) {
          return undefined;
        }
        if (field === EXPIRES_AT_FIELD) {
          expiresAtMs = value;
        }
        break;
      }
      case 1:
        at += 8;
        break;
      case 2: {
        const length = varint(record);
        if (length < 0 || at + length > record.length) {
          return undefined;
        }
        if (field === NAME_FIELD) {
          name = record.toString("utf8", at, at + length);
        } else if (field === SCOPES_FIELD) {
          scopes = [...scopes, record.toString("utf8", at, at + length)];
        } else if (field === ALLOWED_IPS_FIELD) {
          allowedIps = [...allowedIps, record.toString("utf8", at, at + length)];
        }
        at += length;
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        return undefined;
    }
  }
  return at === record.length
    ? { digest, name, expiresAtMs, grants: tokenGrants(scopes, allowedIps) }
    : undefined;
}

/** A stored value read back, any layout; undefined for one that is none (too short, cut). */
export function decodeTokenRecord(record: Buffer): TokenRecord | undefined {
  const { digestBytes, marker, layout1Marker, layout1HeadBytes } = TOKEN_RECORD_LAYOUT;
  if (record.length < digestBytes) {
    return undefined;
  }
  const digest = record.subarray(0, digestBytes);
  const layout = record.length > digestBytes ? record[digestBytes] : undefined;
  if (layout === marker) {
    return decodeLayout2(record, digest);
  }
  if (layout === layout1Marker) {
    if (record.length < layout1HeadBytes) {
      return undefined;
    }
    return {
      digest,
      name: record.toString("utf8", layout1HeadBytes),
      expiresAtMs: Number(record.readBigUInt64BE(digestBytes + 1)),
      grants: DEFAULT_GRANTS,
    };
  }
  return {
    digest,
    name: record.toString("utf8", digestBytes),
    expiresAtMs: undefined,
    grants: DEFAULT_GRANTS,
  };
}

/** The extras of a stored value (their defaults for an older layout, or a value that is none). */
export function tokenRecordExtras(record: Buffer): TokenRecordExtras {
  const { digestBytes, marker, headBytes } = TOKEN_RECORD_LAYOUT;
  const message =
    record.length > digestBytes && record[digestBytes] === marker
      ? fromBinary(TokenRecordSchema, record.subarray(headBytes))
      : create(TokenRecordSchema);
  const {
    $typeName: _type,
    $unknown: _unknown,
    name: _name,
    expiresAtMs: _expiry,
    ...extras
  } = message;
  return extras;
}
