import fc from "fast-check";
import { isRecord, MAX_BODY_BYTES, utf8Strict } from "./hostile-input-checks.js";

// JSON bodies as member lists, so hostile text (1e400, duplicate keys, raw
// bytes) can be written where JSON.stringify could not.

/** One object member; key and value are raw JSON text. */
export interface Member {
  key: string;
  value: string;
}

export type Fields = Record<string, string | number>;

export function membersOf(fields: Fields): Member[] {
  return Object.entries(fields).map(([key, value]) => ({
    key: JSON.stringify(key),
    value: JSON.stringify(value),
  }));
}

export function objectText(members: readonly Member[]): string {
  return `{${members.map((m) => `${m.key}:${m.value}`).join(",")}}`;
}

// Hostile values, as raw JSON text (some deliberately not JSON at all).
export const hostileNumber = fc.constantFrom(
  "-0",
  "0",
  "-0.0",
  "0e0",
  "1e400",
  "-1e400",
  "1e-400",
  "-1e-400",
  "9007199254740991",
  "9007199254740992",
  "9007199254740993",
  "-9007199254740992",
  "9223372036854775807",
  "9223372036854775808",
  "-9223372036854775809",
  "18446744073709551616",
  "0.5",
  "-1",
  "1.5e3",
  "1E+3",
  "9".repeat(5000),
  `1${"0".repeat(400)}`,
  `0.${"0".repeat(400)}1`,
  "NaN",
  "Infinity",
  "-Infinity",
  "0x10",
  "+1",
  "01",
  ".5",
  "1.",
  "--1",
  "1e",
);

export const hostileString = fc.constantFrom(
  '""',
  '" "',
  JSON.stringify("a".repeat(5000)),
  JSON.stringify("é".repeat(5000)),
  JSON.stringify("😀".repeat(200)),
  JSON.stringify("x".repeat(129)),
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udfff"',
  '"\\udc00\\ud800"',
  '"\\ud800x"',
  '"\\u001f"',
  '"\\u007f"',
  '"\\u0085"',
  '"\\u2028"',
  '"\\ufeff"',
  '"\\n"',
  `"${"\u0000"}"`,
  '"\ttab"',
  '"\\x41"',
  '"\\u12"',
  '"unterminated',
  "'single'",
  '"1700000000000"',
  '"0x10"',
  '"__proto__"',
  '"00000000-0000-0000-0000-000000000000"',
  '"ffffffff-ffff-ffff-ffff-ffffffffffff"',
  JSON.stringify("ab".repeat(64)),
  JSON.stringify("AB".repeat(64)),
);

/** n levels of nesting, closed or not. */
export function nested(depth: number, open: string, inner: string, close: string, closed: boolean) {
  return `${open.repeat(depth)}${inner}${closed ? close.repeat(depth) : ""}`;
}

export const deepValue = fc
  .tuple(
    fc.constantFrom(10, 100, 1000, 10_000),
    fc.constantFrom<[string, string]>(["[", "]"], ['{"a":', "}"], ['{"__proto__":', "}"]),
    fc.boolean(),
  )
  .map(([depth, [open, close], closed]) => nested(depth, open, "1", close, closed));

export const hostileOther = fc.constantFrom(
  "null",
  "true",
  "false",
  "[]",
  "{}",
  "[1,2,3]",
  '["a"]',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  "",
  "undefined",
  "[",
  "{",
  "}",
  ",",
);

export const generatedValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
  fc.double().map((d) => String(d)),
  fc.bigInt().map((n) => n.toString()),
  fc.string({ maxLength: 40 }).map((s) => JSON.stringify(s)),
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => JSON.stringify(s)),
);

export const hostileValue: fc.Arbitrary<string> = fc.oneof(
  hostileNumber,
  hostileString,
  hostileOther,
  deepValue,
  generatedValue,
);

export const weirdKey = fc.oneof(
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "hasOwnProperty",
    "valueOf",
    "__defineGetter__",
    "",
    "\u0000",
    "\ud800",
    "k".repeat(5000),
    "user_id",
    "expires_in",
    "token_id",
    "userid",
    "USERID",
    "Name",
    " name",
  ),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 10 }),
);

// Text inserted into a JSON string value: escapes, and raw characters JSON forbids.
export const stringInsert = fc.constantFrom(
  "\\u0000",
  "\\ud800",
  "\\udfff",
  "\\ud800\\ud800",
  "\\u001f",
  "\\n",
  '\\"',
  "\\\\",
  "\\u0041",
  "\u0000",
  "\t",
  "\\x00",
  "\\u12",
  "\\",
  "😀",
  "\ud800",
);

// Raw text inserted anywhere in the body.
export const textInsert = fc.constantFrom(
  ",",
  "}",
  "{",
  "]",
  "[",
  '"',
  ":",
  " ",
  "\u0000",
  "\\",
  "//",
  "\ufeff",
);

// Byte sequences that are not UTF-8 (or, for the BOM, are and get stripped).
export const byteInsert = fc.constantFrom(
  [0xff],
  [0xfe],
  [0x80],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xf4, 0x90, 0x80, 0x80],
  [0xef, 0xbb, 0xbf],
  [0x00],
);

export type MemberMutation =
  | { kind: "replace"; at: number; value: string }
  | { kind: "delete"; at: number }
  | { kind: "add"; at: number; key: string; value: string }
  | { kind: "duplicate"; at: number; value: string; before: boolean }
  | { kind: "duplicateSame"; at: number }
  | { kind: "insertInString"; at: number; offset: number; text: string }
  | { kind: "reencodeNumber"; at: number; form: number }
  | { kind: "moveToFront"; at: number };

export type TextMutation =
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; text: string }
  | { kind: "wrap"; depth: number; open: "[" | '{"body":' }
  | { kind: "pad"; text: string }
  | { kind: "insertBytes"; at: number; bytes: readonly number[] };

export const memberMutation: fc.Arbitrary<MemberMutation> = fc.oneof(
  fc.record({ kind: fc.constant("replace"), at: fc.nat(), value: hostileValue }),
  fc.record({ kind: fc.constant("delete"), at: fc.nat() }),
  fc.record({ kind: fc.constant("add"), at: fc.nat(), key: weirdKey, value: hostileValue }),
  fc.record({
    kind: fc.constant("duplicate"),
    at: fc.nat(),
    value: hostileValue,
    before: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("duplicateSame"), at: fc.nat() }),
  fc.record({
    kind: fc.constant("insertInString"),
    at: fc.nat(),
    offset: fc.nat(),
    text: stringInsert,
  }),
  fc.record({ kind: fc.constant("reencodeNumber"), at: fc.nat(), form: fc.nat(5) }),
  fc.record({ kind: fc.constant("moveToFront"), at: fc.nat() }),
);

export const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.record({ kind: fc.constant("truncate"), at: fc.nat() }),
  fc.record({ kind: fc.constant("insert"), at: fc.nat(), text: textInsert }),
  fc.record({
    kind: fc.constant("wrap"),
    depth: fc.constantFrom(1, 2, 10_000),
    open: fc.constantFrom<"[" | '{"body":'>("[", '{"body":'),
  }),
  fc.record({ kind: fc.constant("pad"), text: fc.constantFrom(" ", "\n\t\r ", "\ufeff") }),
  fc.record({ kind: fc.constant("insertBytes"), at: fc.nat(), bytes: byteInsert }),
);

/** The mutations of one run: member-level first, then text/byte-level. */
export interface BodyMutations {
  members: MemberMutation[];
  text: TextMutation[];
}

export const bodyMutations: fc.Arbitrary<BodyMutations> = fc.record({
  members: fc.array(memberMutation, { maxLength: 3 }),
  text: fc.array(textMutation, { maxLength: 1 }),
});

/** A number written in another notation of the same value (1.0, 1e0, ...). */
export function reencode(text: string, form: number): string {
  if (!/^[1-9][0-9]*$/.test(text)) {
    return text;
  }
  switch (form) {
    case 0:
      return `${text}.0`;
    case 1:
      return `${text}e0`;
    case 2:
      return `${text}.000E+0`;
    case 3:
      return `${text.slice(0, 1)}.${text.slice(1)}e${text.length - 1}`;
    case 4:
      return `${text}0e-1`;
    default:
      return ` ${text} `;
  }
}

export function applyMemberMutation(members: Member[], m: MemberMutation): Member[] {
  const out = members.map((x) => ({ ...x }));
  const i = out.length === 0 ? 0 : m.at % out.length;
  const target = out[i];
  switch (m.kind) {
    case "add":
      out.splice(m.at % (out.length + 1), 0, { key: JSON.stringify(m.key), value: m.value });
      return out;
    case "replace":
      if (target !== undefined) target.value = m.value;
      return out;
    case "delete":
      out.splice(i, target === undefined ? 0 : 1);
      return out;
    case "duplicate":
      if (target !== undefined) {
        out.splice(m.before ? i : i + 1, 0, { key: target.key, value: m.value });
      }
      return out;
    case "duplicateSame":
      if (target !== undefined) out.push({ ...target });
      return out;
    case "insertInString":
      if (target?.value.startsWith('"') === true && target.value.length >= 2) {
        const pos = 1 + (m.offset % (target.value.length - 1));
        target.value = target.value.slice(0, pos) + m.text + target.value.slice(pos);
      }
      return out;
    case "reencodeNumber":
      if (target !== undefined) target.value = reencode(target.value, m.form);
      return out;
    case "moveToFront":
      if (target !== undefined) {
        out.splice(i, 1);
        out.unshift(target);
      }
      return out;
  }
}

export function applyTextMutation(bytes: Uint8Array, m: TextMutation): Uint8Array {
  const buf = Buffer.from(bytes);
  switch (m.kind) {
    case "truncate":
      // Strictly shorter.
      return buf.subarray(0, buf.length === 0 ? 0 : m.at % buf.length);
    case "insert":
    case "insertBytes": {
      const at = m.at % (buf.length + 1);
      const inserted = m.kind === "insert" ? Buffer.from(m.text, "utf8") : Buffer.from(m.bytes);
      return Buffer.concat([buf.subarray(0, at), inserted, buf.subarray(at)]);
    }
    case "wrap": {
      const close = m.open === "[" ? "]" : "}";
      return Buffer.concat([
        Buffer.from(m.open.repeat(m.depth)),
        buf,
        Buffer.from(close.repeat(m.depth)),
      ]);
    }
    case "pad":
      return Buffer.concat([Buffer.from(m.text), buf, Buffer.from(m.text)]);
  }
}

export function mutatedBody(fields: Fields, mutations: BodyMutations): Uint8Array {
  let members = membersOf(fields);
  for (const m of mutations.members) {
    members = applyMemberMutation(members, m);
  }
  let bytes: Uint8Array = Buffer.from(objectText(members), "utf8");
  for (const m of mutations.text) {
    bytes = applyTextMutation(bytes, m);
  }
  return bytes;
}

// JSON name → proto name of the request fields; protobuf JSON accepts both.
export const PROTO_NAMES: Record<string, string> = {
  signature: "signature",
  timestamp: "timestamp",
  userId: "user_id",
  expiresIn: "expires_in",
  name: "name",
  tokenId: "token_id",
};

/**
 * The oracle: is this body, as the server reads it (strict UTF-8, BOM
 * dropped, JSON.parse keeping the last of duplicate keys), exactly the valid
 * request `fields`? Each request field must have its original value under
 * every name it is given by (JSON name, proto name), or be absent as it was;
 * any other key is ignored as unknown.
 */
export function isUnchangedRequest(
  body: Uint8Array,
  fields: Fields,
  fieldNames: readonly string[],
) {
  if (body.byteLength > MAX_BODY_BYTES) {
    return false;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Strict.decode(body));
  } catch {
    return false;
  }
  if (!isRecord(parsed)) {
    return false;
  }
  const object = parsed;
  return fieldNames.every((jsonName) => {
    const names = [...new Set([jsonName, PROTO_NAMES[jsonName] ?? jsonName])];
    const given = names.filter((name) => Object.hasOwn(object, name));
    const original = fields[jsonName];
    if (original === undefined) {
      return given.length === 0;
    }
    return given.length > 0 && given.every((name) => object[name] === original);
  });
}
