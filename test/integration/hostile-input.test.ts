import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, type DescMessage, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  CreateTokenRequestSchema,
  DeleteTokenRequestSchema,
  TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  DeleteUserKeyRequestSchema,
  PutUserKeyRequestSchema,
  UserKeyService,
} from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { isWellFormedToken } from "@perps/token-client/protocol";
import fc from "fast-check";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import {
  newUser,
  signedCreate,
  signedDelete,
  signText,
  type TestUser,
} from "../support/signing.js";
import { createOperatorGrpcClient, operatorGrpcInterceptor } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Hostile input: property-based fuzzing (fast-check) of the REST mapping, the
// Connect JSON protocol and gRPC with random and mutated requests. Whatever
// arrives, the answer is a 4xx / a client-side gRPC code (or a 2xx for a
// request that really is valid), never a 5xx, INTERNAL or a crash, and the
// service is healthy afterwards. Plus one compact test per way of forging a
// request. Seeds are fixed (override all of them with FUZZ_SEED=<n> to
// explore); run counts are bounded so the file runs in well under a minute.

const PATH = "/user/tokens";
const MAX_BODY_BYTES = 64 * 1024;
const IDENTITY_KEY = `01${"00".repeat(31)}`;
const SOME_USER_ID = "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab";

/** Fixed seed per property, unless FUZZ_SEED overrides them all. */
function seed(fixed: number): number {
  const override = process.env.FUZZ_SEED;
  return override === undefined || override === "" ? fixed : Number(override);
}

/** fast-check options: seeded, bounded, no shrinking (each run is a network round trip). */
function runs(fixedSeed: number, numRuns: number): fc.Parameters<unknown> {
  return { seed: seed(fixedSeed), numRuns, endOnFailure: true, includeErrorInReport: true };
}

// ---------------------------------------------------------------------------
// HTTP helpers

interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
}

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** A short printable form of a request body, for assertion messages. */
function show(body: Uint8Array | undefined): string {
  if (body === undefined) {
    return "(no body)";
  }
  const text = Buffer.from(body).toString("utf8");
  const shown = text.length > 300 ? `${text.slice(0, 300)}… (${body.byteLength} bytes)` : text;
  return JSON.stringify(shown);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// HTTP status → the gRPC codes the REST error body may carry with it
// (client/src/protocol/http-status.ts, plus the HTTP-level 404/405/413/415).
const REST_CODES_BY_STATUS: Record<number, readonly number[]> = {
  400: [3, 9, 11],
  401: [16],
  403: [7],
  404: [5],
  405: [12],
  409: [6, 10],
  413: [3],
  415: [3],
  429: [8],
  499: [1],
};

/** Asserts a REST error answer: a 4xx with exactly {"code","message","details":[]}. */
function assertRestError(res: HttpAnswer, context: string, method = "POST"): void {
  assert.ok(res.status >= 400 && res.status < 500, `expected a 4xx, got ${context}`);
  if (method === "HEAD") {
    // No body to check.
    return;
  }
  assert.match(res.contentType, /^application\/json(;|$)/, context);
  const body = parseOrUndefined(res.text);
  assert.ok(isRecord(body), `error body is not a JSON object: ${context}`);
  assert.deepEqual(Object.keys(body).sort(), ["code", "details", "message"], context);
  assert.deepEqual(body.details, [], context);
  assert.equal(typeof body.message, "string", context);
  assert.ok(typeof body.code === "number" && Number.isInteger(body.code), context);
  const allowed = REST_CODES_BY_STATUS[res.status];
  assert.ok(
    allowed?.includes(body.code) === true,
    `code ${body.code} does not go with HTTP ${res.status}: ${context}`,
  );
}

/** Asserts a create answer: 201 (REST) or 200 (Connect) with {expiresAt, id, token}. */
function assertCreated(res: HttpAnswer, status: number, context: string): string {
  assert.equal(res.status, status, `expected ${status} for a valid create, got ${context}`);
  const body = parseOrUndefined(res.text);
  assert.ok(isRecord(body), context);
  assert.deepEqual(Object.keys(body).sort(), ["expiresAt", "id", "token"], context);
  const { expiresAt, id, token } = body;
  assert.ok(typeof expiresAt === "string" && /^\d{4}-\d{2}-\d{2}$/.test(expiresAt), context);
  assert.ok(typeof id === "string" && id.length > 0 && id.length <= 128, context);
  assert.ok(typeof token === "string" && isWellFormedToken(token), context);
  return id;
}

// ---------------------------------------------------------------------------
// JSON bodies as member lists, so hostile text (1e400, duplicate keys, raw
// bytes) can be written where JSON.stringify could not.

/** One object member; key and value are raw JSON text. */
interface Member {
  key: string;
  value: string;
}

type Fields = Record<string, string | number>;

function membersOf(fields: Fields): Member[] {
  return Object.entries(fields).map(([key, value]) => ({
    key: JSON.stringify(key),
    value: JSON.stringify(value),
  }));
}

function objectText(members: readonly Member[]): string {
  return `{${members.map((m) => `${m.key}:${m.value}`).join(",")}}`;
}

// Hostile values, as raw JSON text (some deliberately not JSON at all).
const hostileNumber = fc.constantFrom(
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

const hostileString = fc.constantFrom(
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
function nested(depth: number, open: string, inner: string, close: string, closed: boolean) {
  return `${open.repeat(depth)}${inner}${closed ? close.repeat(depth) : ""}`;
}

const deepValue = fc
  .tuple(
    fc.constantFrom(10, 100, 1000, 10_000),
    fc.constantFrom<[string, string]>(["[", "]"], ['{"a":', "}"], ['{"__proto__":', "}"]),
    fc.boolean(),
  )
  .map(([depth, [open, close], closed]) => nested(depth, open, "1", close, closed));

const hostileOther = fc.constantFrom(
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

const generatedValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
  fc.double().map((d) => String(d)),
  fc.bigInt().map((n) => n.toString()),
  fc.string({ maxLength: 40 }).map((s) => JSON.stringify(s)),
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => JSON.stringify(s)),
);

const hostileValue: fc.Arbitrary<string> = fc.oneof(
  hostileNumber,
  hostileString,
  hostileOther,
  deepValue,
  generatedValue,
);

const weirdKey = fc.oneof(
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
const stringInsert = fc.constantFrom(
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
const textInsert = fc.constantFrom(
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
const byteInsert = fc.constantFrom(
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

type MemberMutation =
  | { kind: "replace"; at: number; value: string }
  | { kind: "delete"; at: number }
  | { kind: "add"; at: number; key: string; value: string }
  | { kind: "duplicate"; at: number; value: string; before: boolean }
  | { kind: "duplicateSame"; at: number }
  | { kind: "insertInString"; at: number; offset: number; text: string }
  | { kind: "reencodeNumber"; at: number; form: number }
  | { kind: "moveToFront"; at: number };

type TextMutation =
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; text: string }
  | { kind: "wrap"; depth: number; open: "[" | '{"body":' }
  | { kind: "pad"; text: string }
  | { kind: "insertBytes"; at: number; bytes: readonly number[] };

const memberMutation: fc.Arbitrary<MemberMutation> = fc.oneof(
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

const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
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
interface BodyMutations {
  members: MemberMutation[];
  text: TextMutation[];
}

const bodyMutations: fc.Arbitrary<BodyMutations> = fc.record({
  members: fc.array(memberMutation, { maxLength: 3 }),
  text: fc.array(textMutation, { maxLength: 1 }),
});

/** A number written in another notation of the same value (1.0, 1e0, ...). */
function reencode(text: string, form: number): string {
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

function applyMemberMutation(members: Member[], m: MemberMutation): Member[] {
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

function applyTextMutation(bytes: Uint8Array, m: TextMutation): Uint8Array {
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

function mutatedBody(fields: Fields, mutations: BodyMutations): Uint8Array {
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
const PROTO_NAMES: Record<string, string> = {
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
function isUnchangedRequest(body: Uint8Array, fields: Fields, fieldNames: readonly string[]) {
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

// ---------------------------------------------------------------------------
// gRPC with raw bytes

interface GrpcAnswer {
  code: grpc.status;
  details: string;
}

/** One unary call whose request message is the given bytes, unparsed. */
function rawUnary(client: grpc.Client, path: string, message: Uint8Array): Promise<GrpcAnswer> {
  const identity = (b: Buffer) => b;
  return new Promise((resolve) => {
    client.makeUnaryRequest<Buffer, Buffer>(
      path,
      identity,
      identity,
      Buffer.from(message),
      new grpc.Metadata(),
      { deadline: Date.now() + 10_000 },
      (err) => {
        resolve(err === null ? { code: grpc.status.OK, details: "" } : err);
      },
    );
  });
}

const SERVER_SIDE_CODES = new Set([
  grpc.status.INTERNAL,
  grpc.status.UNKNOWN,
  grpc.status.DATA_LOSS,
  grpc.status.UNAVAILABLE,
]);

const CLIENT_SIDE_CODES = new Set([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.UNAUTHENTICATED,
  grpc.status.NOT_FOUND,
  grpc.status.ALREADY_EXISTS,
  grpc.status.FAILED_PRECONDITION,
]);

function grpcContext(target: string, message: Uint8Array, answer: GrpcAnswer): string {
  const code = grpc.status[answer.code] ?? String(answer.code);
  return `${target} with ${Buffer.from(message).toString("hex").slice(0, 400)} → ${code} ${JSON.stringify(answer.details)}`;
}

type ByteMutation =
  | { kind: "flip"; at: number; mask: number }
  | { kind: "set"; at: number; value: number }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "remove"; at: number; length: number }
  | { kind: "repeat" };

const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip"), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({
    kind: fc.constant("set"),
    at: fc.nat(),
    value: fc.constantFrom(0x00, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12, 0x1a, 0x22, 0x0f, 0x0e),
  }),
  fc.record({ kind: fc.constant("truncate"), at: fc.nat() }),
  fc.record({
    kind: fc.constant("insert"),
    at: fc.nat(),
    bytes: fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 12 }),
      fc.constantFrom(
        Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
        Uint8Array.of(0x12, 0xff, 0xff, 0xff, 0xff, 0x0f),
        Uint8Array.of(0x0b),
        Uint8Array.of(0x0c),
        Uint8Array.of(0x2a, 0x02, 0xed, 0xa0),
      ),
    ),
  }),
  fc.record({ kind: fc.constant("remove"), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant("repeat") }),
);

function applyByteMutation(bytes: Uint8Array, m: ByteMutation): Uint8Array {
  const buf = Buffer.from(bytes);
  if (m.kind === "repeat") {
    return Buffer.concat([buf, buf]);
  }
  const at = m.at % (m.kind === "insert" ? buf.length + 1 : Math.max(buf.length, 1));
  switch (m.kind) {
    case "flip":
    case "set":
      if (at < buf.length) {
        const old = buf[at] ?? 0;
        buf[at] = m.kind === "flip" ? old ^ m.mask : m.value;
      }
      return buf;
    case "truncate":
      return buf.subarray(0, at);
    case "insert":
      return Buffer.concat([buf.subarray(0, at), m.bytes, buf.subarray(at)]);
    case "remove":
      return Buffer.concat([buf.subarray(0, at), buf.subarray(at + m.length)]);
  }
}

/** Does `bytes` decode to exactly `original` (so the call must succeed)? */
function decodesTo<Desc extends DescMessage>(
  schema: Desc,
  bytes: Uint8Array,
  original: Uint8Array,
): boolean {
  try {
    return equals(schema, fromBinary(schema, bytes), fromBinary(schema, original));
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------

describe("hostile input", () => {
  let redis: TestRedis;
  let service: TestService;
  let grpcKeys: ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>;
  let grpcTokens: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;
  let rawInternal: grpc.Client;
  let rawPublic: grpc.Client;
  let nameCounter = 0;
  let lastTimestamp = 0;
  let fuzzing: { user: TestUser; runs: number } | undefined;

  async function registeredUser(userId?: string): Promise<TestUser> {
    const u = await newUser(userId);
    await grpcKeys.putUserKey({ userId: u.userId, publicKey: u.publicKey });
    return u;
  }

  /**
   * The user whose valid requests a fuzz run mutates: a fresh one every 300
   * runs, so the live-token cap (1000 per user) is never reached.
   */
  async function fuzzUser(): Promise<TestUser> {
    if (fuzzing === undefined || fuzzing.runs >= 300) {
      fuzzing = { user: await registeredUser(), runs: 0 };
    }
    fuzzing.runs++;
    return fuzzing.user;
  }

  /** Server-time milliseconds, never the same twice: every signed message differs (no replays). */
  function timestamp(): number {
    lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
    return lastTimestamp;
  }

  /** A name no other request of this file uses. */
  function uniqueName(): string {
    nameCounter++;
    return `fuzz ${nameCounter}`;
  }

  async function http(
    base: string,
    method: string,
    path: string,
    body: Uint8Array | undefined,
    contentType: string | null = "application/json",
  ): Promise<HttpAnswer> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: contentType === null ? {} : { "content-type": contentType },
      ...(body === undefined ? {} : { body }),
    });
    return {
      status: res.status,
      contentType: res.headers.get("content-type") ?? "",
      text: await res.text(),
    };
  }

  /** A valid REST create body, signed now, with or without the optional fields. */
  async function validCreateFields(
    user: TestUser,
    opts: { expiresIn: boolean; name: boolean },
  ): Promise<Fields> {
    const t = timestamp();
    const expiresIn = opts.expiresIn ? 3600 : undefined;
    const name = opts.name ? uniqueName() : undefined;
    const message = `createToken:${t}:${expiresIn ?? ""}:${name ?? ""}:${user.userId}`;
    const fields: Fields = {
      signature: await signText(user.secretKey, message),
      timestamp: t,
      userId: user.userId,
    };
    if (expiresIn !== undefined) fields.expiresIn = expiresIn;
    if (name !== undefined) fields.name = name;
    return fields;
  }

  /** A valid REST delete body for a token that exists, signed now. */
  async function validDeleteFields(user: TestUser): Promise<Fields> {
    const token = await grpcTokens.createToken(
      await signedCreate(user, { timestamp: BigInt(timestamp()) }),
    );
    const t = timestamp();
    const message = `deleteToken:${t}:${token.id}:${user.userId}`;
    return {
      signature: await signText(user.secretKey, message),
      timestamp: t,
      tokenId: token.id,
      userId: user.userId,
    };
  }

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({ redisUrl: redis.url });
    grpcKeys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    grpcTokens = createGrpcClient(TokenService, service.internalAddress);
    // As an operator: the admin RPCs' own handling of hostile bytes is what is tested.
    rawInternal = new grpc.Client(service.internalAddress, grpc.credentials.createInsecure(), {
      interceptors: [operatorGrpcInterceptor()],
    });
    rawPublic = new grpc.Client(service.publicAddress, grpc.credentials.createInsecure());
  });

  after(async () => {
    grpcKeys.close();
    grpcTokens.close();
    rawInternal.close();
    rawPublic.close();
    await service.stop();
    await redis.dispose();
  });

  describe("REST fuzzing of /user/tokens", () => {
    const createFieldNames = ["signature", "timestamp", "userId", "expiresIn", "name"];
    const deleteFieldNames = ["signature", "timestamp", "tokenId", "userId"];

    it("POST with mutated signed bodies: 201 only when still the valid request, else a 4xx error body", async () => {
      let valid = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.record({ expiresIn: fc.boolean(), name: fc.boolean() }),
          bodyMutations,
          async (optional, mutations) => {
            const fields = await validCreateFields(await fuzzUser(), optional);
            const body = mutatedBody(fields, mutations);
            const res = await http(service.publicUrl, "POST", PATH, body);
            const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for POST ${show(body)}`;
            if (isUnchangedRequest(body, fields, createFieldNames)) {
              valid++;
              assertCreated(res, 201, context);
            } else {
              refused++;
              assertRestError(res, context);
            }
          },
        ),
        runs(0x5eed_0001, 600),
      );
      // The mix exercises both sides of the oracle.
      assert.ok(valid >= 10 && refused >= 200, `valid ${valid}, refused ${refused}`);
    });

    it("DELETE with mutated signed bodies: 200 {} only when still the valid request, else a 4xx error body", async () => {
      let valid = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(bodyMutations, async (mutations) => {
          const fields = await validDeleteFields(await fuzzUser());
          const body = mutatedBody(fields, mutations);
          const res = await http(service.publicUrl, "DELETE", PATH, body);
          const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for DELETE ${show(body)}`;
          if (isUnchangedRequest(body, fields, deleteFieldNames)) {
            valid++;
            assert.equal(res.status, 200, context);
            assert.equal(res.text, "{}", context);
          } else {
            refused++;
            assertRestError(res, context);
          }
        }),
        runs(0x5eed_0002, 300),
      );
      assert.ok(valid >= 5 && refused >= 100, `valid ${valid}, refused ${refused}`);
    });

    it("random bodies, bytes, content types, methods and paths: always a 4xx error body", async () => {
      const fieldKey = fc.constantFrom(...createFieldNames, ...deleteFieldNames, "user_id");
      const body = fc.oneof(
        { arbitrary: fc.jsonValue().map((v) => JSON.stringify(v) ?? "null"), weight: 3 },
        {
          // Objects over the request's own keys with hostile values: strict typing.
          arbitrary: fc
            .array(fc.record({ key: fieldKey, value: hostileValue }), { maxLength: 6 })
            .map((ms) =>
              objectText(ms.map((m) => ({ key: JSON.stringify(m.key), value: m.value }))),
            ),
          weight: 4,
        },
        { arbitrary: fc.string({ unit: "binary", maxLength: 200 }), weight: 1 },
        { arbitrary: hostileValue, weight: 2 },
        { arbitrary: fc.uint8Array({ maxLength: 300 }), weight: 2 },
        {
          arbitrary: fc.constantFrom(
            `{"signature":"${"a".repeat(MAX_BODY_BYTES)}"}`,
            nested(100_000, "[", "", "]", true),
            nested(20_000, "[", "", "]", false),
            "\ufeff{}",
            "",
          ),
          weight: 1,
        },
      );
      const method = fc.oneof(
        { arbitrary: fc.constantFrom("POST", "DELETE"), weight: 8 },
        {
          arbitrary: fc.constantFrom("PUT", "PATCH", "GET", "HEAD", "OPTIONS", "PURGE"),
          weight: 1,
        },
      );
      const contentType = fc.oneof(
        { arbitrary: fc.constant("application/json"), weight: 8 },
        {
          arbitrary: fc.constantFrom(
            null,
            "",
            "text/plain",
            "application/json; charset=utf-8",
            "application/json; charset=latin1",
            'APPLICATION/JSON;CHARSET="UTF-8"',
            "application/jsonx",
            "application/json-patch+json",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/grpc",
            "application/proto",
            "application/connect+json",
            "application/json; charset=utf-16",
            ";;;",
          ),
          weight: 2,
        },
      );
      const path = fc.oneof(
        { arbitrary: fc.constant(PATH), weight: 8 },
        {
          arbitrary: fc.constantFrom(
            "/user/tokens/",
            "/user/tokens?userId=x&timestamp=1",
            "/USER/TOKENS",
            "/user//tokens",
            "/user/tokens/%00",
            "/user/%ff",
            "/user/tokens/../tokens",
            "/",
            `/${"a".repeat(5000)}`,
          ),
          weight: 1,
        },
      );
      await fc.assert(
        fc.asyncProperty(
          body,
          method,
          contentType,
          path,
          async (bodyValue, methodName, type, pathName) => {
            const bytes =
              typeof bodyValue === "string" ? Buffer.from(bodyValue, "utf8") : bodyValue;
            const noBody = methodName === "GET" || methodName === "HEAD";
            const res = await http(
              service.publicUrl,
              methodName,
              pathName,
              noBody ? undefined : bytes,
              type,
            );
            const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for ${methodName} ${pathName} (content-type ${String(type)}) ${show(noBody ? undefined : bytes)}`;
            if (type === "application/grpc") {
              // A gRPC client calling a path that is no RPC of ours: 200 and
              // UNIMPLEMENTED in the trailers, as every gRPC server answers
              // (edge-answers.test.ts reads the trailers).
              assert.equal(res.status, 200, context);
              assert.equal(res.contentType, "application/grpc", context);
              assert.equal(res.text, "", context);
            } else {
              assertRestError(res, context, methodName);
            }
          },
        ),
        runs(0x5eed_0003, 800),
      );
    });
  });

  describe("Connect JSON fuzzing of TokenService/CreateToken (public listener)", () => {
    it("random and mutated bodies: 200 for the valid request, never a 5xx", async () => {
      const connectPath = "/perps.token.v1.TokenService/CreateToken";
      const createFieldNames = ["signature", "timestamp", "userId", "expiresIn", "name"];
      const input = fc.oneof(
        { arbitrary: bodyMutations.map((m) => ({ kind: "mutated" as const, m })), weight: 3 },
        {
          arbitrary: fc
            .oneof(
              fc.jsonValue().map((v) => JSON.stringify(v) ?? "null"),
              hostileValue,
              fc.uint8Array({ maxLength: 300 }),
            )
            .map((b) => ({ kind: "random" as const, b })),
          weight: 2,
        },
      );
      let valid = 0;
      await fc.assert(
        fc.asyncProperty(input, fc.boolean(), async (x, withName) => {
          const fields = await validCreateFields(await fuzzUser(), {
            expiresIn: withName,
            name: withName,
          });
          const body =
            x.kind === "mutated"
              ? mutatedBody(fields, x.m)
              : typeof x.b === "string"
                ? Buffer.from(x.b, "utf8")
                : x.b;
          const res = await http(service.publicUrl, "POST", connectPath, body);
          const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for ${show(body)}`;
          // protobuf-es refuses duplicate keys in Connect JSON (REST keeps the
          // last one), so a body that may repeat a key may go either way.
          const mayRepeatKey =
            x.kind === "mutated" &&
            x.m.members.some((m) => ["add", "duplicate", "duplicateSame"].includes(m.kind));
          if (
            x.kind === "mutated" &&
            !mayRepeatKey &&
            isUnchangedRequest(body, fields, createFieldNames)
          ) {
            valid++;
            assertCreated(res, 200, context);
            return;
          }
          assert.ok(res.status < 500, `5xx: ${context}`);
          if (res.status >= 400) {
            const error = parseOrUndefined(res.text);
            assert.ok(isRecord(error) && typeof error.code === "string", context);
            assert.notEqual(error.code, "internal", context);
            assert.notEqual(error.code, "unknown", context);
          } else {
            // protobuf JSON is laxer than REST (e.g. null means unset), so a
            // changed body may still be a valid request; then it is answered fully.
            assertCreated(res, 200, context);
          }
        }),
        runs(0x5eed_0004, 400),
      );
      assert.ok(valid >= 5, `only ${valid} valid requests`);
    });
  });

  describe("Connect binary fuzzing of TokenService (public listener)", () => {
    // A well-formed (unsigned) CreateTokenRequest to mutate.
    const someCreateBinary = toBinary(
      CreateTokenRequestSchema,
      create(CreateTokenRequestSchema, {
        signature: "ab".repeat(64),
        timestamp: 1n,
        userId: SOME_USER_ID,
      }),
    );

    it("random and mutated protobuf bytes as application/proto: a 4xx, never a 5xx", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("CreateToken", "DeleteToken"),
          fc.oneof(
            fc.uint8Array({ maxLength: 200 }),
            fc
              .array(byteMutation, { minLength: 1, maxLength: 3 })
              .map((ms) =>
                ms.reduce<Uint8Array>((bytes, m) => applyByteMutation(bytes, m), someCreateBinary),
              ),
          ),
          async (method, body) => {
            const res = await http(
              service.publicUrl,
              "POST",
              `/perps.token.v1.TokenService/${method}`,
              body,
              "application/proto",
            );
            const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for ${method} ${Buffer.from(body).toString("hex").slice(0, 400)}`;
            assert.ok(res.status >= 400 && res.status < 500, context);
            const error = parseOrUndefined(res.text);
            assert.ok(isRecord(error) && typeof error.code === "string", context);
          },
        ),
        runs(0x5eed_0007, 200),
      );
    });
  });

  describe("gRPC fuzzing with raw request bytes", () => {
    interface Target {
      label: string;
      listener: "public" | "internal";
      path: string;
      /** Extra codes this target may answer (UNIMPLEMENTED on the public listener). */
      extra: readonly grpc.status[];
    }
    const targets: Target[] = [
      ["public", "TokenService/CreateToken", []],
      ["public", "TokenService/DeleteToken", []],
      ["public", "UserKeyService/PutUserKey", [grpc.status.UNIMPLEMENTED]],
      ["internal", "TokenService/CreateToken", []],
      ["internal", "TokenService/DeleteToken", []],
      ["internal", "UserKeyService/PutUserKey", []],
      ["internal", "UserKeyService/DeleteUserKey", []],
    ].map(([listener, method, extra]) => ({
      label: `${String(listener)} ${String(method)}`,
      listener: listener === "public" ? "public" : "internal",
      path: `/perps.token.v1.${String(method)}`,
      extra: extra as grpc.status[],
    }));

    it("random bytes as the request message: a client-side code, never INTERNAL/UNKNOWN/DATA_LOSS/UNAVAILABLE", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...targets),
          fc.oneof(
            fc.uint8Array({ maxLength: 200 }),
            // Well-formed wire format with random field numbers and types.
            fc
              .array(
                fc.tuple(
                  fc.integer({ min: 1, max: 20 }),
                  fc.nat(5),
                  fc.uint8Array({ maxLength: 20 }),
                ),
                { maxLength: 6 },
              )
              .map((entries) =>
                Buffer.concat(
                  entries.map(([field, wireType, payload]) =>
                    Buffer.concat([
                      Buffer.of((field << 3) | wireType),
                      wireType === 2 ? Buffer.of(payload.length) : Buffer.alloc(0),
                      payload,
                    ]),
                  ),
                ),
              ),
          ),
          async (target, message) => {
            const client = target.listener === "public" ? rawPublic : rawInternal;
            const answer = await rawUnary(client, target.path, message);
            const context = grpcContext(target.label, message, answer);
            assert.ok(!SERVER_SIDE_CODES.has(answer.code), context);
            assert.ok(
              answer.code === grpc.status.OK ||
                CLIENT_SIDE_CODES.has(answer.code) ||
                target.extra.includes(answer.code),
              context,
            );
            // Random bytes are never a validly signed token request.
            if (target.path.includes("TokenService")) {
              assert.notEqual(answer.code, grpc.status.OK, context);
            }
          },
        ),
        runs(0x5eed_0005, 600),
      );
    });

    it("mutated valid protobuf encodings: OK only when they still decode to the valid request", async () => {
      type Kind = "create" | "delete" | "putKey" | "deleteKey";
      async function validRequest(
        kind: Kind,
      ): Promise<{ schema: DescMessage; path: string; bytes: Uint8Array }> {
        switch (kind) {
          case "create": {
            const req = await signedCreate(await fuzzUser(), {
              timestamp: BigInt(timestamp()),
              expiresIn: 60n,
              name: uniqueName(),
            });
            return {
              schema: CreateTokenRequestSchema,
              path: "/perps.token.v1.TokenService/CreateToken",
              bytes: toBinary(CreateTokenRequestSchema, create(CreateTokenRequestSchema, req)),
            };
          }
          case "delete": {
            const user = await fuzzUser();
            const token = await grpcTokens.createToken(
              await signedCreate(user, { timestamp: BigInt(timestamp()) }),
            );
            const req = await signedDelete(user, token.id, { timestamp: BigInt(timestamp()) });
            return {
              schema: DeleteTokenRequestSchema,
              path: "/perps.token.v1.TokenService/DeleteToken",
              bytes: toBinary(DeleteTokenRequestSchema, create(DeleteTokenRequestSchema, req)),
            };
          }
          case "putKey":
          case "deleteKey": {
            const fresh = await newUser();
            const schema = kind === "putKey" ? PutUserKeyRequestSchema : DeleteUserKeyRequestSchema;
            const msg = create(schema, { userId: fresh.userId, publicKey: fresh.publicKey });
            return {
              schema,
              path: `/perps.token.v1.UserKeyService/${kind === "putKey" ? "PutUserKey" : "DeleteUserKey"}`,
              bytes: toBinary(schema, msg),
            };
          }
        }
      }
      let valid = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom<Kind>("create", "delete", "putKey", "deleteKey"),
          fc.boolean(),
          fc.array(byteMutation, { minLength: 1, maxLength: 3 }),
          async (kind, overPublic, mutations) => {
            const { schema, path, bytes } = await validRequest(kind);
            let message = bytes;
            for (const m of mutations) {
              message = applyByteMutation(message, m);
            }
            const isTokenCall = kind === "create" || kind === "delete";
            const client = isTokenCall && overPublic ? rawPublic : rawInternal;
            const answer = await rawUnary(client, path, message);
            const context = grpcContext(`${kind} (${path})`, message, answer);
            assert.ok(!SERVER_SIDE_CODES.has(answer.code), context);
            if (decodesTo(schema, message, bytes)) {
              valid++;
              assert.equal(answer.code, grpc.status.OK, context);
            } else if (isTokenCall) {
              // A token request that changed is no longer validly signed.
              assert.ok(CLIENT_SIDE_CODES.has(answer.code), context);
            } else {
              // A changed key request may still be a well-formed one.
              assert.ok(
                answer.code === grpc.status.OK || CLIENT_SIDE_CODES.has(answer.code),
                context,
              );
            }
          },
        ),
        runs(0x5eed_0006, 500),
      );
      assert.ok(valid >= 1, `only ${valid} unchanged requests`);
    });
  });

  describe("forgery: each way of forging a request is refused with 401 Invalid signature", () => {
    async function restCall(method: string, fields: Fields): Promise<HttpAnswer> {
      return http(service.publicUrl, method, PATH, Buffer.from(JSON.stringify(fields)));
    }

    function assertInvalidSignature(res: HttpAnswer): void {
      assert.equal(res.status, 401, `${res.status} ${res.text}`);
      assert.deepEqual(JSON.parse(res.text), {
        code: 16,
        message: "Invalid signature",
        details: [],
      });
    }

    async function createBody(signer: TestUser, userId: string, message?: string) {
      const timestamp = Date.now();
      const text = message ?? `createToken:${timestamp}:::${userId}`;
      return { signature: await signText(signer.secretKey, text), timestamp, userId };
    }

    it("a signature by another user's key", async () => {
      const alice = await registeredUser();
      const mallory = await registeredUser();
      assertInvalidSignature(await restCall("POST", await createBody(mallory, alice.userId)));
      // Mallory's signature is good for Mallory: only the key is wrong.
      const own = await restCall("POST", await createBody(mallory, mallory.userId));
      assert.equal(own.status, 201, own.text);
    });

    it("a key deleted after registration", async () => {
      const victim = await registeredUser();
      const before = await restCall("POST", await createBody(victim, victim.userId));
      assert.equal(before.status, 201, before.text);
      await grpcKeys.deleteUserKey({ userId: victim.userId, publicKey: victim.publicKey });
      assertInvalidSignature(await restCall("POST", await createBody(victim, victim.userId)));
    });

    it("the message's fields in another order", async () => {
      const u = await registeredUser();
      const t = Date.now();
      const id = u.userId;
      for (const message of [
        `createToken:${id}:${t}:60:n`,
        `createToken:${t}:n:60:${id}`,
        `createToken:60:${t}:n:${id}`,
        `${t}:createToken:60:n:${id}`,
      ]) {
        const body = {
          signature: await signText(u.secretKey, message),
          timestamp: t,
          userId: id,
          expiresIn: 60,
          name: "n",
        };
        assertInvalidSignature(await restCall("POST", body));
      }
      const token = await grpcTokens.createToken(await signedCreate(u));
      const reordered = `deleteToken:${t}:${id}:${token.id}`;
      assertInvalidSignature(
        await restCall("DELETE", {
          signature: await signText(u.secretKey, reordered),
          timestamp: t,
          tokenId: token.id,
          userId: id,
        }),
      );
    });

    it("a create signature used for delete (and a delete signature used for create)", async () => {
      const u = await registeredUser();
      const token = await grpcTokens.createToken(await signedCreate(u));
      const t = Date.now();
      const createSignature = await signText(u.secretKey, `createToken:${t}:::${u.userId}`);
      assertInvalidSignature(
        await restCall("DELETE", {
          signature: createSignature,
          timestamp: t,
          tokenId: token.id,
          userId: u.userId,
        }),
      );
      const deleteSignature = await signText(
        u.secretKey,
        `deleteToken:${t}:${token.id}:${u.userId}`,
      );
      assertInvalidSignature(
        await restCall("POST", { signature: deleteSignature, timestamp: t, userId: u.userId }),
      );
      // The token is untouched: its own delete works.
      const ok = await restCall("DELETE", {
        signature: await signText(u.secretKey, `deleteToken:${t}:${token.id}:${u.userId}`),
        timestamp: t,
        tokenId: token.id,
        userId: u.userId,
      });
      assert.equal(ok.status, 200, ok.text);
    });

    it("a small-order key: PutUserKey refuses the identity, and its universal forgery is refused", async () => {
      const forged = `${IDENTITY_KEY}${"00".repeat(32)}`;
      // R = identity, S = 0 verifies for any message under the identity key with a lax verifier.
      assert.equal(forged.length, 128);
      for (const u of [await newUser(), await registeredUser()]) {
        await assert.rejects(
          grpcKeys.putUserKey({ userId: u.userId, publicKey: IDENTITY_KEY }),
          (err) => isGrpcError(err, grpc.status.INVALID_ARGUMENT),
        );
        assertInvalidSignature(
          await restCall("POST", { signature: forged, timestamp: Date.now(), userId: u.userId }),
        );
        assertInvalidSignature(
          await restCall("DELETE", {
            signature: forged,
            timestamp: Date.now(),
            tokenId: "any",
            userId: u.userId,
          }),
        );
      }
    });
  });

  describe("after the fuzzing", () => {
    it("the service is still healthy: /healthz, /readyz, a normal create, no error logs", async () => {
      for (const base of [service.publicUrl, service.internalUrl]) {
        for (const path of ["/healthz", "/readyz"]) {
          const res = await fetch(`${base}${path}`);
          assert.equal(res.status, 200, `${base}${path}: ${res.status}`);
        }
      }
      const user = await registeredUser();
      const fields = await validCreateFields(user, { expiresIn: true, name: true });
      const res = await http(service.publicUrl, "POST", PATH, Buffer.from(JSON.stringify(fields)));
      assertCreated(res, 201, `${res.status} ${res.text}`);
      const grpcAnswer = await grpcTokens.createToken(
        await signedCreate(user, { timestamp: BigInt(timestamp()) }),
      );
      assert.ok(isWellFormedToken(grpcAnswer.token));

      const lines = service.logs.flatMap((chunk) => chunk.split("\n")).filter((l) => l !== "");
      assert.ok(lines.length > 100, `only ${lines.length} log lines`);
      const errors = lines.filter((line) => {
        const entry = parseOrUndefined(line);
        return !isRecord(entry) || typeof entry.level !== "number" || entry.level >= 50;
      });
      assert.deepEqual(errors.slice(0, 5), [], `${errors.length} error log lines`);
    });
  });
});
