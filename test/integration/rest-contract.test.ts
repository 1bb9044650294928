import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { connect as connectHttp2, type IncomingHttpHeaders } from "node:http2";
import { after, before, describe, it } from "node:test";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { isWellFormedToken } from "@perps/token-client/protocol";
import { loadOpenApiDocument } from "../../src/openapi/committed-document.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import {
  newUser,
  signedCreate,
  signedDelete,
  signText,
  type TestUser,
} from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { createOpenApiResponseChecker } from "../unit/openapi/openapi-response-checker.js";

// The REST contract of POST/DELETE /user/tokens (spec token-api.md and the
// issue's rules), checked over real HTTP with fetch and node:http2. Request
// bodies and signed messages are written here by hand, independent of the
// service's own code, so the test pins the wire contract.

const PATH = "/user/tokens";
const MAX_SAFE = 9_007_199_254_740_991;
const TWO_53 = 2 ** 53;
const DEFAULT_EXPIRES_IN = 604_800;
const MAX_LIFETIME = 31_536_000;
const MAX_BODY_BYTES = 64 * 1024;

// Every response these tests receive, success or error, must also be one the
// committed OpenAPI document (openapi.json) describes for its path, method
// and status: schema, content type and required headers.
const openApi = createOpenApiResponseChecker(loadOpenApiDocument());

// gRPC codes in the error body.
const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;
const UNAVAILABLE = 14;
const UNAUTHENTICATED = 16;

// The bearer challenges of a 401 of GET /user/tokens, as the issue spells them.
const BEARER_CHALLENGE = 'Bearer realm="perps-tokens"';
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="perps-tokens", error="invalid_token"';

const SIGNATURE_MESSAGE =
  "signature: must be exactly 128 lowercase hex characters, without 0x prefix";

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** JSON text written as is, for values JSON.stringify cannot produce (1e400). */
class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

type FieldValue = JsonValue | RawJson;
type Fields = Record<string, FieldValue>;
/** Field changes: a value replaces the field, undefined removes it. */
type Changes = Record<string, FieldValue | undefined>;

function jsonText(fields: Fields): string {
  const members = Object.entries(fields).map(
    ([key, value]) =>
      `${JSON.stringify(key)}:${value instanceof RawJson ? value.text : JSON.stringify(value)}`,
  );
  return `{${members.join(",")}}`;
}

function withChanges(fields: Fields, changes: Changes): Fields {
  const out: Fields = { ...fields };
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) {
      delete out[key];
    } else {
      out[key] = value;
    }
  }
  return out;
}

interface CreateOptions {
  timestamp?: number;
  expiresIn?: number;
  name?: string;
  /** Sent and signed instead of the user's own userId. */
  userId?: string;
}

/** A create body signed over `createToken:<timestamp>:<expiresIn>:<name>:<userId>`. */
async function createFields(user: TestUser, opts: CreateOptions = {}): Promise<Fields> {
  const timestamp = opts.timestamp ?? Date.now();
  const userId = opts.userId ?? user.userId;
  const message = `createToken:${timestamp}:${opts.expiresIn ?? ""}:${opts.name ?? ""}:${userId}`;
  const fields: Fields = { signature: await signText(user.secretKey, message), timestamp, userId };
  if (opts.expiresIn !== undefined) {
    fields.expiresIn = opts.expiresIn;
  }
  if (opts.name !== undefined) {
    fields.name = opts.name;
  }
  return fields;
}

/** A delete body signed over `deleteToken:<timestamp>:<tokenId>:<userId>`. */
async function deleteFields(
  user: TestUser,
  tokenId: string,
  opts: { timestamp?: number; userId?: string } = {},
): Promise<Fields> {
  const timestamp = opts.timestamp ?? Date.now();
  const userId = opts.userId ?? user.userId;
  const signature = await signText(user.secretKey, `deleteToken:${timestamp}:${tokenId}:${userId}`);
  return { signature, timestamp, tokenId, userId };
}

/** A UUID with the given version (index 14) and variant (index 19) digits. */
function uuidWith(version: string, variant: string): string {
  const id = randomUUID();
  return `${id.slice(0, 14)}${version}${id.slice(15, 19)}${variant}${id.slice(20)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return assert.fail(`response body is not JSON: ${JSON.stringify(text)}`);
  }
}

interface RestResponse {
  status: number;
  headers: Headers;
  text: string;
}

function describeResponse(res: RestResponse): string {
  return `HTTP ${res.status} ${res.text}`;
}

/**
 * Asserts the google.rpc.Status error body: exactly code, message and
 * details (empty), as application/json. `code` undefined: any non-OK code.
 */
function assertError(
  res: RestResponse,
  status: number,
  code: number | undefined,
  message?: string | RegExp,
): string {
  assert.equal(res.status, status, describeResponse(res));
  assert.match(res.headers.get("content-type") ?? "", /^application\/json(;|$)/);
  const body = parseJson(res.text);
  assert.ok(isRecord(body), res.text);
  assert.deepEqual(Object.keys(body).sort(), ["code", "details", "message"], res.text);
  if (message === "Signature expired") {
    // The one error whose details are more than empty: which way the clock is off.
    assert.ok(Array.isArray(body.details), res.text);
    assert.deepEqual(
      body.details.map((d: unknown) => (isRecord(d) ? [d["@type"], d.reason ?? d.locale] : d)),
      [
        ["type.googleapis.com/google.rpc.ErrorInfo", "TIMESTAMP_OUTSIDE_WINDOW"],
        ["type.googleapis.com/google.rpc.LocalizedMessage", "en-US"],
      ],
      res.text,
    );
  } else {
    assert.deepEqual(body.details, []);
  }
  assert.equal(typeof body.code, "number");
  if (code === undefined) {
    assert.ok(Number.isInteger(body.code) && body.code !== 0, res.text);
  } else {
    assert.equal(body.code, code, res.text);
  }
  assert.equal(typeof body.message, "string");
  const text = String(body.message);
  if (typeof message === "string") {
    assert.equal(text, message);
  } else if (message !== undefined) {
    assert.match(text, message);
  }
  return text;
}

interface Created {
  expiresAt: string;
  id: string;
  token: string;
}

function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Asserts a 201 create answer whose expiresAt is the UTC date of server time + lifetime. */
function assertCreated(
  res: RestResponse,
  lifetimeSeconds: number,
  sentAt: number,
  answeredAt: number,
): Created {
  assert.equal(res.status, 201, describeResponse(res));
  assert.match(res.headers.get("content-type") ?? "", /^application\/json(;|$)/);
  const body = parseJson(res.text);
  assert.ok(isRecord(body), res.text);
  assert.deepEqual(Object.keys(body).sort(), ["expiresAt", "id", "token"], res.text);
  const { expiresAt, id, token } = body;
  assert.ok(typeof expiresAt === "string" && typeof id === "string" && typeof token === "string");
  assert.match(expiresAt, /^\d{4}-\d{2}-\d{2}$/);
  const allowed = new Set([sentAt, answeredAt].map((t) => utcDate(t + lifetimeSeconds * 1000)));
  assert.ok(allowed.has(expiresAt), `${expiresAt} not in ${[...allowed].join(", ")}`);
  assert.ok(id.length > 0 && id.length <= 128, id);
  assert.ok(isWellFormedToken(token), token);
  return { expiresAt, id, token };
}

function assertDeleted(res: RestResponse): void {
  assert.equal(res.status, 200, describeResponse(res));
  assert.match(res.headers.get("content-type") ?? "", /^application\/json(;|$)/);
  assert.deepEqual(parseJson(res.text), {});
}

interface H2Response {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** node:http2 response headers as fetch Headers, pseudo-headers left out. */
function fetchHeaders(h2: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(h2)) {
    if (name.startsWith(":") || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      out.append(name, v);
    }
  }
  return out;
}

/** One request over cleartext HTTP/2 with prior knowledge (h2c). */
function h2Request(
  baseUrl: string,
  method: string,
  body: string | undefined,
  contentType = "application/json",
  extraHeaders: Record<string, string> = {},
): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const session = connectHttp2(baseUrl);
    session.on("error", reject);
    const req = session.request(
      {
        ":method": method,
        ":path": PATH,
        ...(body === undefined ? {} : { "content-type": contentType }),
        ...extraHeaders,
      },
      { endStream: body === undefined },
    );
    const chunks: Buffer[] = [];
    let headers: IncomingHttpHeaders = {};
    req.on("response", (h) => {
      headers = h;
    });
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("error", (err) => {
      session.close();
      reject(err);
    });
    req.on("end", () => {
      session.close();
      const res = {
        status: Number(headers[":status"]),
        headers,
        text: Buffer.concat(chunks).toString("utf8"),
      };
      try {
        openApi.check({ method, path: PATH, ...res, headers: fetchHeaders(headers) });
      } catch (err) {
        reject(err);
        return;
      }
      resolve(res);
    });
    if (body !== undefined) {
      req.end(body);
    }
  });
}

describe("REST contract of /user/tokens", () => {
  let redis: TestRedis;
  let service: TestService;
  let grpcKeys: ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>;
  let grpcTokens: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;

  async function registeredUser(userId?: string): Promise<TestUser> {
    const user = await newUser(userId);
    await grpcKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    return user;
  }

  /**
   * A request to the public listener; contentType null sends none. The
   * response is checked against the OpenAPI document.
   */
  async function rest(
    method: string,
    body: string | Uint8Array | undefined,
    opts: { path?: string; contentType?: string | null; authorization?: string } = {},
  ): Promise<RestResponse> {
    const contentType = opts.contentType === undefined ? "application/json" : opts.contentType;
    const path = opts.path ?? PATH;
    const res = await fetch(`${service.publicUrl}${path}`, {
      method,
      headers: {
        ...(contentType === null ? {} : { "content-type": contentType }),
        ...(opts.authorization === undefined ? {} : { authorization: opts.authorization }),
      },
      ...(body === undefined ? {} : { body }),
    });
    const received = { status: res.status, headers: res.headers, text: await res.text() };
    openApi.check({ method, path, ...received });
    return received;
  }

  const post = (fields: Fields) => rest("POST", jsonText(fields));
  const list = (authorization: string | undefined) =>
    rest("GET", undefined, {
      contentType: null,
      ...(authorization === undefined ? {} : { authorization }),
    });
  const del = (fields: Fields) => rest("DELETE", jsonText(fields));

  /** Creates a token over REST and checks the 201 answer. */
  async function created(user: TestUser, opts: CreateOptions = {}): Promise<Created> {
    const fields = await createFields(user, opts);
    const sentAt = Date.now();
    const res = await post(fields);
    return assertCreated(res, opts.expiresIn ?? DEFAULT_EXPIRES_IN, sentAt, Date.now());
  }

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({
      redis: redis.topology,
      tokenMaxLifetimeSeconds: MAX_LIFETIME,
    });
    grpcKeys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    grpcTokens = createGrpcClient(TokenService, service.internalAddress);
  });

  after(async () => {
    grpcKeys.close();
    grpcTokens.close();
    await service.stop();
    await redis.dispose();
  });

  describe("success answers", () => {
    it("create → 201 {expiresAt, id, token}, expiresAt 7 days ahead by default", async () => {
      const user = await registeredUser();
      await created(user);
    });

    for (const [expiresIn, name] of [
      [1, undefined],
      [86_400, undefined],
      [DEFAULT_EXPIRES_IN, undefined],
      [DEFAULT_EXPIRES_IN + 1, "week and a second"],
      [MAX_LIFETIME, "a year"],
    ] as const) {
      it(`create with expiresIn ${expiresIn} → expiresAt is the UTC date of now + ${expiresIn} s`, async () => {
        const user = await registeredUser();
        await created(user, { expiresIn, ...(name === undefined ? {} : { name }) });
      });
    }

    it("delete → 200 with the body exactly {}", async () => {
      const user = await registeredUser();
      const token = await created(user, { name: "to delete" });
      const res = await del(await deleteFields(user, token.id));
      assertDeleted(res);
      assert.equal(res.text, "{}");
    });

    it("accepts application/json; charset=utf-8 and Application/JSON", async () => {
      const user = await registeredUser();
      for (const contentType of ["application/json; charset=utf-8", "Application/JSON"]) {
        const sentAt = Date.now();
        const res = await rest("POST", jsonText(await createFields(user)), { contentType });
        assertCreated(res, DEFAULT_EXPIRES_IN, sentAt, Date.now());
      }
    });

    it("ignores unknown fields (including __proto__ and nested values)", async () => {
      const user = await registeredUser();
      const fields = withChanges(await createFields(user, { name: "extra" }), {
        foo: 1,
        nested: { a: [1, "two", null] },
        user_token: "x",
      });
      const text = `${jsonText(fields).slice(0, -1)},"__proto__":{"admin":true}}`;
      const sentAt = Date.now();
      const res = await rest("POST", text);
      const token = assertCreated(res, DEFAULT_EXPIRES_IN, sentAt, Date.now());
      const delText = jsonText(
        withChanges(await deleteFields(user, token.id), { unknown: { deep: true } }),
      );
      assertDeleted(await rest("DELETE", delText));
    });

    it("accepts a body of exactly 64 KiB", async () => {
      const user = await registeredUser();
      const fields = await createFields(user);
      const base = jsonText(withChanges(fields, { padding: "" }));
      const padding = "p".repeat(MAX_BODY_BYTES - Buffer.byteLength(base));
      const text = jsonText(withChanges(fields, { padding }));
      assert.equal(Buffer.byteLength(text), MAX_BODY_BYTES);
      const sentAt = Date.now();
      assertCreated(await rest("POST", text), DEFAULT_EXPIRES_IN, sentAt, Date.now());
    });
  });

  describe("rule 1: shape → 400 INVALID_ARGUMENT naming the field", () => {
    const createCases: {
      name: string;
      change: Changes | ((fields: Fields) => Changes);
      message: string | RegExp;
    }[] = [
      // signature
      {
        name: "uppercase signature (a valid one, upper-cased)",
        change: (fields) => ({ signature: String(fields.signature).toUpperCase() }),
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "signature of 127 chars",
        change: { signature: "a".repeat(127) },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "signature of 129 chars",
        change: { signature: "a".repeat(129) },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "0x + 128 hex chars",
        change: { signature: `0x${"a".repeat(128)}` },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "0x + 126 hex chars",
        change: { signature: `0x${"a".repeat(126)}` },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "non-hex signature",
        change: { signature: "g".repeat(128) },
        message: SIGNATURE_MESSAGE,
      },
      { name: "empty signature", change: { signature: "" }, message: /^signature: / },
      { name: "signature as a number", change: { signature: 5 }, message: /^signature: / },
      { name: "signature null", change: { signature: null }, message: /^signature: / },
      // timestamp typing and range
      {
        name: "timestamp as a string",
        change: { timestamp: String(Date.now()) },
        message: /^timestamp: /,
      },
      {
        name: "timestamp with a fraction",
        change: { timestamp: Date.now() + 0.5 },
        message: /^timestamp: /,
      },
      {
        name: "timestamp 1e400",
        change: { timestamp: new RawJson("1e400") },
        message: /^timestamp: /,
      },
      {
        name: "timestamp -1e400",
        change: { timestamp: new RawJson("-1e400") },
        message: /^timestamp: /,
      },
      { name: "timestamp 2^53", change: { timestamp: TWO_53 }, message: /^timestamp: / },
      { name: "timestamp -(2^53)", change: { timestamp: -TWO_53 }, message: /^timestamp: / },
      { name: "timestamp true", change: { timestamp: true }, message: /^timestamp: / },
      { name: "timestamp null", change: { timestamp: null }, message: /^timestamp: / },
      { name: "timestamp as an object", change: { timestamp: {} }, message: /^timestamp: / },
      // userId
      {
        name: "userId not a UUID",
        change: { userId: "user-1" },
        message: /^userId: must be a UUID/,
      },
      {
        name: "userId without dashes",
        change: { userId: randomUUID().replaceAll("-", "") },
        message: /^userId: must be a UUID/,
      },
      {
        name: "userId in braces",
        change: { userId: `{${randomUUID()}}` },
        message: /^userId: must be a UUID/,
      },
      { name: "userId as a number", change: { userId: 5 }, message: /^userId: / },
      { name: "userId null", change: { userId: null }, message: /^userId: / },
      ...["0", "9"].map((v) => ({
        name: `userId version digit ${v}`,
        change: { userId: uuidWith(v, "8") },
        message: /^userId: must be a UUID/,
      })),
      ...["0", "1", "2", "3", "4", "5", "6", "7", "c", "d", "e", "f", "C", "F"].map((v) => ({
        name: `userId variant digit ${v}`,
        change: { userId: uuidWith("4", v) },
        message: /^userId: must be a UUID/,
      })),
      // expiresIn typing, range and rules
      { name: "expiresIn as a string", change: { expiresIn: "3600" }, message: /^expiresIn: / },
      { name: "expiresIn with a fraction", change: { expiresIn: 3600.5 }, message: /^expiresIn: / },
      {
        name: "expiresIn 1e400",
        change: { expiresIn: new RawJson("1e400") },
        message: /^expiresIn: /,
      },
      { name: "expiresIn 2^53", change: { expiresIn: TWO_53 }, message: /^expiresIn: / },
      { name: "expiresIn -(2^53)", change: { expiresIn: -TWO_53 }, message: /^expiresIn: / },
      { name: "expiresIn true", change: { expiresIn: true }, message: /^expiresIn: / },
      { name: "expiresIn null", change: { expiresIn: null }, message: /^expiresIn: / },
      {
        name: "expiresIn 0",
        change: { expiresIn: 0 },
        message: "expiresIn: must be greater than 0",
      },
      {
        name: "expiresIn -1",
        change: { expiresIn: -1 },
        message: "expiresIn: must be greater than 0",
      },
      {
        name: "expiresIn -(2^53-1)",
        change: { expiresIn: -MAX_SAFE },
        message: "expiresIn: must be greater than 0",
      },
      {
        name: "expiresIn 604801 without name",
        change: { expiresIn: DEFAULT_EXPIRES_IN + 1, name: undefined },
        message: "name: is required when expiresIn is greater than 604800",
      },
      {
        name: "expiresIn 31536001 with a name",
        change: { expiresIn: MAX_LIFETIME + 1 },
        message: /^expiresIn: must be at most 31536000/,
      },
      {
        name: "expiresIn 2^53-1 with a name",
        change: { expiresIn: MAX_SAFE },
        message: /^expiresIn: must be at most 31536000/,
      },
      // name
      { name: "empty name", change: { name: "" }, message: /^name: / },
      { name: "name of 129 characters", change: { name: "n".repeat(129) }, message: /^name: / },
      { name: "name with U+0001", change: { name: "a\u0001b" }, message: /^name: / },
      { name: "name with a newline", change: { name: "a\nb" }, message: /^name: / },
      { name: "name with DEL", change: { name: "a\u007fb" }, message: /^name: / },
      { name: "name with a C1 control", change: { name: "a\u0085b" }, message: /^name: / },
      { name: "name as a number", change: { name: 5 }, message: /^name: / },
      { name: "name true", change: { name: true }, message: /^name: / },
      { name: "name null", change: { name: null }, message: /^name: / },
      { name: "name as an array", change: { name: ["a"] }, message: /^name: / },
    ];

    for (const c of createCases) {
      it(`create refuses ${c.name}`, async () => {
        const user = await registeredUser();
        const fields = await createFields(user, { expiresIn: 3600, name: "shape" });
        const change = typeof c.change === "function" ? c.change(fields) : c.change;
        const res = await post(withChanges(fields, change));
        assertError(res, 400, INVALID_ARGUMENT, c.message);
      });
    }

    const deleteCases: { name: string; change: Changes; message: string | RegExp }[] = [
      { name: "empty tokenId", change: { tokenId: "" }, message: "tokenId: is required" },
      {
        name: "tokenId of 129 characters",
        change: { tokenId: "t".repeat(129) },
        message: /^tokenId: /,
      },
      { name: "tokenId as a number", change: { tokenId: 5 }, message: /^tokenId: / },
      { name: "tokenId null", change: { tokenId: null }, message: /^tokenId: / },
      {
        name: "uppercase signature",
        change: { signature: "A".repeat(128) },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "signature of 127 chars",
        change: { signature: "a".repeat(127) },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "signature of 129 chars",
        change: { signature: "a".repeat(129) },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "0x signature",
        change: { signature: `0x${"a".repeat(128)}` },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "timestamp as a string",
        change: { timestamp: String(Date.now()) },
        message: /^timestamp: /,
      },
      { name: "timestamp with a fraction", change: { timestamp: 1.5 }, message: /^timestamp: / },
      {
        name: "timestamp 1e400",
        change: { timestamp: new RawJson("1e400") },
        message: /^timestamp: /,
      },
      { name: "timestamp 2^53", change: { timestamp: TWO_53 }, message: /^timestamp: / },
      { name: "timestamp -(2^53)", change: { timestamp: -TWO_53 }, message: /^timestamp: / },
      { name: "timestamp true", change: { timestamp: true }, message: /^timestamp: / },
      { name: "timestamp null", change: { timestamp: null }, message: /^timestamp: / },
      {
        name: "userId version 9",
        change: { userId: uuidWith("9", "a") },
        message: /^userId: must be a UUID/,
      },
      {
        name: "userId variant c",
        change: { userId: uuidWith("4", "c") },
        message: /^userId: must be a UUID/,
      },
      { name: "userId as a number", change: { userId: 5 }, message: /^userId: / },
    ];

    for (const c of deleteCases) {
      it(`delete refuses ${c.name}`, async () => {
        const user = await registeredUser();
        const res = await del(withChanges(await deleteFields(user, "some-token"), c.change));
        assertError(res, 400, INVALID_ARGUMENT, c.message);
      });
    }

    for (const field of ["signature", "timestamp", "userId"]) {
      it(`create without ${field} → 400 "${field}: is required"`, async () => {
        const user = await registeredUser();
        const fields = await createFields(user, { name: `missing ${field}` });
        const res = await post(withChanges(fields, { [field]: undefined }));
        assertError(res, 400, INVALID_ARGUMENT, `${field}: is required`);
      });
    }

    for (const field of ["signature", "timestamp", "tokenId", "userId"]) {
      it(`delete without ${field} → 400 "${field}: is required"`, async () => {
        const user = await registeredUser();
        const token = await created(user);
        const res = await del(
          withChanges(await deleteFields(user, token.id), { [field]: undefined }),
        );
        assertError(res, 400, INVALID_ARGUMENT, `${field}: is required`);
        // The refused request deleted nothing.
        assertDeleted(await del(await deleteFields(user, token.id)));
      });
    }

    it("a required field given only in the query string is still missing (body is *)", async () => {
      const user = await registeredUser();
      const fields = await createFields(user);
      const res = await rest("POST", jsonText(withChanges(fields, { timestamp: undefined })), {
        path: `${PATH}?timestamp=${String(fields.timestamp)}`,
      });
      assertError(res, 400, INVALID_ARGUMENT, "timestamp: is required");
    });

    for (const text of ["[]", '"x"', "null", "", "{", "42", "true", '{"a":1', "{}x"]) {
      it(`refuses the non-object body ${JSON.stringify(text)} for POST and DELETE`, async () => {
        for (const method of ["POST", "DELETE"]) {
          assertError(await rest(method, text), 400, INVALID_ARGUMENT);
        }
      });
    }

    it("refuses a body that is not UTF-8", async () => {
      const user = await registeredUser();
      const text = jsonText(await createFields(user, { name: "NAME" }));
      const bytes = Buffer.from(text, "utf8");
      const at = bytes.indexOf("NAME");
      bytes[at] = 0xff;
      assertError(await rest("POST", bytes), 400, INVALID_ARGUMENT);
    });

    it("checks the shape before the time window", async () => {
      const user = await registeredUser();
      const res = await post(await createFields(user, { timestamp: 1, expiresIn: 0 }));
      assertError(res, 400, INVALID_ARGUMENT, "expiresIn: must be greater than 0");
    });

    it("accepts the boundaries: name of 128 characters (emoji count as one), expiresIn 1", async () => {
      const user = await registeredUser();
      await created(user, { name: "n".repeat(128) });
      await created(user, { name: "🚀".repeat(128), expiresIn: 1 });
    });

    it("a tokenId of 128 characters passes the shape rules (→ 404 for an unknown one)", async () => {
      const user = await registeredUser();
      const res = await del(await deleteFields(user, "t".repeat(128)));
      assertError(res, 404, NOT_FOUND);
    });

    it("a tokenId with a lone surrogate → 400 (its UTF-8 would be U+FFFD's, another id's message)", async () => {
      const user = await registeredUser();
      // JSON.stringify escapes the lone surrogate as \ud800; signText signs its UTF-8, U+FFFD.
      const fields = await deleteFields(user, "a\uD800b");
      assert.match(jsonText(fields), /a\\ud800b/);
      assertError(
        await del(fields),
        400,
        INVALID_ARGUMENT,
        "tokenId: must not contain unpaired surrogates",
      );
    });

    it("timestamps of ±(2^53−1) pass the shape rules and are expired (→ 401)", async () => {
      const user = await registeredUser();
      for (const timestamp of [MAX_SAFE, -MAX_SAFE]) {
        assertError(
          await post(await createFields(user, { timestamp })),
          401,
          UNAUTHENTICATED,
          "Signature expired",
        );
        assertError(
          await del(await deleteFields(user, "x", { timestamp })),
          401,
          UNAUTHENTICATED,
          "Signature expired",
        );
      }
    });
  });

  describe("userId forms, end to end over REST", () => {
    const accepted: [string, string][] = [
      ...["1", "2", "3", "4", "5", "6", "7", "8"].map((v): [string, string] => [
        `version digit ${v}`,
        uuidWith(v, "9"),
      ]),
      ...["8", "9", "a", "b", "A", "B"].map((v): [string, string] => [
        `variant digit ${v}`,
        uuidWith("7", v),
      ]),
      ["the nil UUID", "00000000-0000-0000-0000-000000000000"],
      ["the max UUID", "ffffffff-ffff-ffff-ffff-ffffffffffff"],
      ["the max UUID in uppercase", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"],
      ["an uppercase UUID", randomUUID().toUpperCase()],
    ];
    for (const [name, userId] of accepted) {
      it(`accepts ${name} (${userId}): create 201, delete 200`, async () => {
        const user = await registeredUser(userId);
        const token = await created(user);
        assertDeleted(await del(await deleteFields(user, token.id)));
      });
    }

    it("identity is case-insensitive; the signature covers the userId verbatim", async () => {
      const lower = randomUUID();
      const upper = lower.toUpperCase();
      // Key registered under the lowercase form, used with the uppercase one.
      const user = await registeredUser(lower);
      const token = await created(user, { userId: upper, name: "case" });
      // The name is taken for the other spelling too.
      assertError(
        await post(await createFields(user, { userId: lower, name: "case" })),
        409,
        ALREADY_EXISTS,
      );
      // Signed over lowercase, sent as uppercase → the signature does not verify.
      const signedLower = await createFields(user, { userId: lower });
      assertError(
        await post(withChanges(signedLower, { userId: upper })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      // Created with uppercase, deleted with lowercase.
      assertDeleted(await del(await deleteFields(user, token.id, { userId: lower })));
      assertError(await del(await deleteFields(user, token.id, { userId: upper })), 404, NOT_FOUND);
    });
  });

  describe("rule 2: time window → 401 Signature expired", () => {
    for (const offset of [-121_000, 121_000]) {
      it(`refuses a timestamp ${offset / 1000} s from server time, for create and delete`, async () => {
        const user = await registeredUser();
        const token = await created(user);
        const timestamp = Date.now() + offset;
        assertError(
          await post(await createFields(user, { timestamp })),
          401,
          UNAUTHENTICATED,
          "Signature expired",
        );
        assertError(
          await del(await deleteFields(user, token.id, { timestamp })),
          401,
          UNAUTHENTICATED,
          "Signature expired",
        );
        // The refused delete left the token in place.
        assertDeleted(await del(await deleteFields(user, token.id)));
      });
    }

    for (const offset of [-115_000, 115_000]) {
      it(`accepts a timestamp ${offset / 1000} s from server time, for create and delete`, async () => {
        const user = await registeredUser();
        const token = await created(user, { timestamp: Date.now() + offset });
        assertDeleted(
          await del(await deleteFields(user, token.id, { timestamp: Date.now() + offset })),
        );
      });
    }

    it("checks the window before the signature", async () => {
      const user = await registeredUser();
      const fields = await createFields(user, { timestamp: Date.now() - 200_000 });
      const res = await post(withChanges(fields, { signature: "0".repeat(128) }));
      assertError(res, 401, UNAUTHENTICATED, "Signature expired");
    });
  });

  describe("rule 3: signature → 401 Invalid signature", () => {
    it("omitted optional fields leave empty slots in the signed message", async () => {
      const user = await registeredUser();
      const cases: { message: (t: number) => string; fields: Fields; lifetime: number }[] = [
        {
          message: (t) => `createToken:${t}:3600::${user.userId}`,
          fields: { expiresIn: 3600 },
          lifetime: 3600,
        },
        {
          message: (t) => `createToken:${t}::slot:${user.userId}`,
          fields: { name: "slot" },
          lifetime: DEFAULT_EXPIRES_IN,
        },
        {
          message: (t) => `createToken:${t}:::${user.userId}`,
          fields: {},
          lifetime: DEFAULT_EXPIRES_IN,
        },
      ];
      for (const c of cases) {
        const timestamp = Date.now();
        const signature = await signText(user.secretKey, c.message(timestamp));
        const res = await post({ signature, timestamp, userId: user.userId, ...c.fields });
        assertCreated(res, c.lifetime, timestamp, Date.now());
      }
    });

    it('refuses a message with "604800" filled into the omitted expiresIn slot', async () => {
      const user = await registeredUser();
      const timestamp = Date.now();
      for (const [message, fields] of [
        [`createToken:${timestamp}:604800::${user.userId}`, {}],
        [`createToken:${timestamp}:604800:filled:${user.userId}`, { name: "filled" }],
      ] as const) {
        const signature = await signText(user.secretKey, message);
        const res = await post({ signature, timestamp, userId: user.userId, ...fields });
        assertError(res, 401, UNAUTHENTICATED, "Invalid signature");
      }
    });

    it("refuses an explicit expiresIn 604800 signed with an empty slot", async () => {
      const user = await registeredUser();
      const timestamp = Date.now();
      const signature = await signText(user.secretKey, `createToken:${timestamp}:::${user.userId}`);
      const res = await post({ signature, timestamp, userId: user.userId, expiresIn: 604_800 });
      assertError(res, 401, UNAUTHENTICATED, "Invalid signature");
    });

    it("refuses a well-formed signature that does not verify, and a tampered field", async () => {
      const user = await registeredUser();
      const fields = await createFields(user, { expiresIn: 60 });
      assertError(
        await post(withChanges(fields, { signature: "ab".repeat(64) })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      assertError(
        await post(withChanges(fields, { expiresIn: 61 })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      assertError(
        await del(withChanges(await deleteFields(user, "a"), { tokenId: "b" })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
    });

    it("gives the same answer for an unknown user and for another user's key", async () => {
      const stranger = await newUser();
      assertError(
        await post(await createFields(stranger)),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      assertError(
        await del(await deleteFields(stranger, "t")),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      const alice = await registeredUser();
      const mallory = await registeredUser();
      assertError(
        await post(await createFields(mallory, { userId: alice.userId })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
    });
  });

  describe("rule 4: business rules", () => {
    it("a name held by a live token → 409 ALREADY_EXISTS", async () => {
      const user = await registeredUser();
      const first = await created(user, { name: "bot" });
      assertError(await post(await createFields(user, { name: "bot" })), 409, ALREADY_EXISTS);
      // Names are per user, and free again once the token is deleted.
      await created(await registeredUser(), { name: "bot" });
      assertDeleted(await del(await deleteFields(user, first.id)));
      await created(user, { name: "bot" });
    });

    it("an unknown or already deleted tokenId → 404 NOT_FOUND", async () => {
      const user = await registeredUser();
      assertError(await del(await deleteFields(user, "no-such-token")), 404, NOT_FOUND);
      const token = await created(user);
      assertDeleted(await del(await deleteFields(user, token.id)));
      assertError(await del(await deleteFields(user, token.id)), 404, NOT_FOUND);
    });

    it("the same create again while its token is live → 409 with a google.rpc.ErrorInfo naming it", async () => {
      const user = await registeredUser();
      const sentAt = Date.now();
      const fields = await createFields(user, { name: "replayed", timestamp: sentAt });
      const first = assertCreated(await post(fields), DEFAULT_EXPIRES_IN, sentAt, Date.now());
      const again = await post(fields);
      assert.equal(again.status, 409, describeResponse(again));
      assert.match(again.headers.get("content-type") ?? "", /^application\/json(;|$)/);
      assert.deepEqual(parseJson(again.text), {
        code: ALREADY_EXISTS,
        message: `Signature already used: this request created token ${first.id}`,
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "TOKEN_ALREADY_CREATED",
            domain: "perps-tokens",
            metadata: { tokenId: first.id },
          },
        ],
      });
      assert.ok(!again.text.includes(first.token), "the token is never sent again");
      // A refused request (the name is taken) is remembered too: sent again, it is used.
      const refused = await createFields(user, { name: "replayed", timestamp: sentAt - 1 });
      assertError(await post(refused), 409, ALREADY_EXISTS, /^name: /);
      assertError(await post(refused), 401, UNAUTHENTICATED, "Signature already used");
    });

    it("another user's tokenId → 404 NOT_FOUND, and the token survives", async () => {
      const alice = await registeredUser();
      const bob = await registeredUser();
      const token = await created(alice, { name: "alice's" });
      assertError(await del(await deleteFields(bob, token.id)), 404, NOT_FOUND);
      assertDeleted(await del(await deleteFields(alice, token.id)));
    });
  });

  describe("HTTP hygiene", () => {
    for (const contentType of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/jsonx",
      null,
    ]) {
      it(`content-type ${contentType ?? "(none)"} → 415 for POST and DELETE`, async () => {
        const user = await registeredUser();
        const text = jsonText(await createFields(user));
        for (const method of ["POST", "DELETE"]) {
          const body = contentType === null ? Buffer.from(text) : text;
          assertError(await rest(method, body, { contentType }), 415, undefined);
        }
      });
    }

    it("a body over 64 KiB → 413 (with content-length) for POST and DELETE", async () => {
      const user = await registeredUser();
      const fields = withChanges(await createFields(user), { padding: "p".repeat(MAX_BODY_BYTES) });
      for (const method of ["POST", "DELETE"]) {
        assertError(await rest(method, jsonText(fields)), 413, undefined);
      }
      // The connection still serves the next request.
      await created(user);
    });

    it("a body over 64 KiB → 413 (chunked, without content-length)", async () => {
      const user = await registeredUser();
      const text = jsonText(
        withChanges(await createFields(user), { padding: "p".repeat(MAX_BODY_BYTES) }),
      );
      const bytes = Buffer.from(text);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 16_384) {
            controller.enqueue(bytes.subarray(i, i + 16_384));
          }
          controller.close();
        },
      });
      const res = await fetch(`${service.publicUrl}${PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        duplex: "half",
      });
      const received = { status: res.status, headers: res.headers, text: await res.text() };
      openApi.check({ method: "POST", path: PATH, ...received });
      assertError(received, 413, undefined);
    });

    for (const method of ["PUT", "PATCH"]) {
      it(`${method} ${PATH} → 405 with Allow: DELETE, GET, POST`, async () => {
        const user = await registeredUser();
        const res = await rest(method, jsonText(await createFields(user)));
        assertError(res, 405, undefined);
        assert.equal(res.headers.get("allow"), "DELETE, GET, POST");
      });
    }

    for (const [method, path] of [
      ["GET", "/"],
      ["POST", "/user/token"],
      ["POST", "/user/tokens/abc"],
      ["POST", "/users/tokens"],
      ["DELETE", "/tokens"],
      ["GET", "/user"],
    ] as const) {
      it(`${method} ${path} (unknown path) → 404 with the JSON error shape`, async () => {
        const user = await registeredUser();
        const body = method === "GET" ? undefined : jsonText(await createFields(user));
        assertError(await rest(method, body, { path }), 404, NOT_FOUND);
      });
    }
  });

  describe("other protocols", () => {
    it("a token created over REST is deleted over gRPC (internal listener)", async () => {
      const user = await registeredUser();
      const token = await created(user, { name: "rest→grpc" });
      const res = await grpcTokens.deleteToken(await signedDelete(user, token.id));
      assert.equal(res.$typeName, "perps.token.v1.DeleteTokenResponse");
      // Gone for REST as well.
      assertError(await del(await deleteFields(user, token.id)), 404, NOT_FOUND);
    });

    it("a token created over gRPC is deleted over REST", async () => {
      const user = await registeredUser();
      const token = await grpcTokens.createToken(
        await signedCreate(user, { name: "grpc→rest", expiresIn: 3600n }),
      );
      // The name is taken for REST too.
      assertError(await post(await createFields(user, { name: "grpc→rest" })), 409, ALREADY_EXISTS);
      assertDeleted(await del(await deleteFields(user, token.id)));
      await assert.rejects(grpcTokens.deleteToken(await signedDelete(user, token.id)), (err) =>
        isGrpcError(err, GrpcStatus.NOT_FOUND),
      );
    });

    it("REST over h2c (HTTP/2 prior knowledge): create 201, list 200, delete 200, then list 401", async () => {
      const user = await registeredUser();
      const sentAt = Date.now();
      const createRes = await h2Request(
        service.publicUrl,
        "POST",
        jsonText(await createFields(user, { name: "h2c" })),
      );
      const token = assertCreated(
        {
          status: createRes.status,
          headers: new Headers({ "content-type": String(createRes.headers["content-type"]) }),
          text: createRes.text,
        },
        DEFAULT_EXPIRES_IN,
        sentAt,
        Date.now(),
      );
      const auth = { authorization: `Bearer ${token.token}` };
      const listRes = await h2Request(service.publicUrl, "GET", undefined, undefined, auth);
      assert.equal(listRes.status, 200, listRes.text);
      assert.deepEqual(parseJson(listRes.text), {
        tokens: [{ id: token.id, name: "h2c", expiresAt: token.expiresAt }],
      });
      const deleteRes = await h2Request(
        service.publicUrl,
        "DELETE",
        jsonText(await deleteFields(user, token.id)),
      );
      assert.equal(deleteRes.status, 200, deleteRes.text);
      assert.deepEqual(parseJson(deleteRes.text), {});
      const getRes = await h2Request(service.publicUrl, "GET", undefined, undefined, auth);
      assert.equal(getRes.status, 401, getRes.text);
      assert.equal(getRes.headers["www-authenticate"], INVALID_TOKEN_CHALLENGE);
    });
  });

  describe("GET /user/tokens (ListTokens, bearer token)", () => {
    it("→ 200 {tokens: [{id, name, expiresAt}]}, ordered by name in UTF-8 bytes, session tokens left out", async () => {
      const user = await registeredUser();
      const session = await created(user);
      const zeta = await created(user, { name: "zeta", expiresIn: 3600 });
      const alpha = await created(user, { name: "Alpha" });
      const emoji = await created(user, { name: "😀" });
      const res = await list(`Bearer ${session.token}`);
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json(;|$)/);
      assert.deepEqual(parseJson(res.text), {
        tokens: [
          { id: alpha.id, name: "Alpha", expiresAt: alpha.expiresAt },
          { id: zeta.id, name: "zeta", expiresAt: zeta.expiresAt },
          { id: emoji.id, name: "😀", expiresAt: emoji.expiresAt },
        ],
      });
      // The bearer scheme name is case-insensitive (RFC 7235).
      assert.equal((await list(`bearer ${zeta.token}`)).text, res.text);
    });

    it('→ 200 {"tokens": []} for a user with only session tokens', async () => {
      const user = await registeredUser();
      const session = await created(user);
      const res = await list(`Bearer ${session.token}`);
      assert.equal(res.status, 200);
      assert.equal(res.text, '{"tokens":[]}');
    });

    for (const [name, header] of [
      ["no Authorization header", undefined],
      ["Basic credentials", "Basic dXNlcjpwYXNz"],
    ] as const) {
      it(`${name} → 401 with WWW-Authenticate: ${BEARER_CHALLENGE}`, async () => {
        const res = await list(header);
        assertError(res, 401, UNAUTHENTICATED);
        assert.equal(res.headers.get("www-authenticate"), BEARER_CHALLENGE);
      });
    }

    it('a malformed, unknown, deleted or expired token → the same 401 with error="invalid_token"', async () => {
      const user = await registeredUser();
      const deleted = await created(user, { name: "deleted" });
      assertDeleted(await del(await deleteFields(user, deleted.id)));
      const expired = await created(user, { name: "expired", expiresIn: 1 });
      const live = await created(user, { name: "live" });
      // Another character in the secret part, checksum unchanged: malformed.
      const broken = `${live.token.slice(0, 60)}${live.token[60] === "A" ? "B" : "A"}${live.token.slice(61)}`;
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const answers = new Set<string>();
      for (const token of ["pt_abc", broken, "x".repeat(89), deleted.token, expired.token, ""]) {
        const res = await list(`Bearer ${token}`);
        assertError(res, 401, UNAUTHENTICATED);
        assert.equal(res.headers.get("www-authenticate"), INVALID_TOKEN_CHALLENGE, token);
        answers.add(res.text);
      }
      assert.equal(answers.size, 1, [...answers].join("\n"));
      // The live token still lists, without the deleted or expired one.
      assert.deepEqual(
        (
          parseJson((await list(`Bearer ${live.token}`)).text) as { tokens: { name: string }[] }
        ).tokens.map((t) => t.name),
        ["live"],
      );
    });
  });

  // Last: stops and restarts Redis.
  describe("Redis unavailable", () => {
    it("→ 503 UNAVAILABLE with the JSON error shape, then recovers", async () => {
      const user = await registeredUser();
      const fields = await createFields(user, { name: "outage" });
      const listed = await created(user, { name: "listed" });
      await redis.stop();
      try {
        assertError(await post(fields), 503, UNAVAILABLE);
        assertError(await list(`Bearer ${listed.token}`), 503, UNAVAILABLE);
      } finally {
        await redis.restart();
      }
      const deadline = Date.now() + 5000;
      while ((await fetch(`${service.publicUrl}/readyz`)).status !== 200) {
        assert.ok(Date.now() < deadline, "service not ready again within 5 s");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await created(user, { name: "outage" });
    });
  });
});
