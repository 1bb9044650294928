import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { loadOpenApiDocument } from "../../src/openapi/openapi-endpoint.js";
import { createOpenApiResponseChecker } from "./openapi-response-checker.js";
import { signText, type TestUser } from "./signing.js";

// Request bodies of the REST contract suites (rest-*.test.ts), written by hand
// independent of the service's own code, so the tests pin the wire contract.

export const PATH = "/user/tokens";
export const MAX_SAFE = 9_007_199_254_740_991;
export const TWO_53 = 2 ** 53;
export const DEFAULT_EXPIRES_IN = 604_800;
export const MAX_LIFETIME = 31_536_000;
export const MAX_BODY_BYTES = 64 * 1024;

// Every response these tests receive, success or error, must also be one the
// committed OpenAPI document (openapi.json) describes for its path, method
// and status: schema, content type and required headers.
export const openApi = createOpenApiResponseChecker(loadOpenApiDocument());

// gRPC codes in the error body.
export const INVALID_ARGUMENT = 3;
export const NOT_FOUND = 5;
export const ALREADY_EXISTS = 6;
export const UNAVAILABLE = 14;
export const UNAUTHENTICATED = 16;

// The bearer challenges of a 401 of GET /user/tokens, as the issue spells them.
export const BEARER_CHALLENGE = 'Bearer realm="perps-tokens"';
export const INVALID_TOKEN_CHALLENGE = 'Bearer realm="perps-tokens", error="invalid_token"';

export const SIGNATURE_MESSAGE =
  "signature: must be exactly 128 lowercase hex characters, without 0x prefix";

export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/** JSON text written as is, for values JSON.stringify cannot produce (1e400). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export type FieldValue = JsonValue | RawJson;
export type Fields = Record<string, FieldValue>;
/** Field changes: a value replaces the field, undefined removes it. */
export type Changes = Record<string, FieldValue | undefined>;

export function jsonText(fields: Fields): string {
  const members = Object.entries(fields).map(
    ([key, value]) =>
      `${JSON.stringify(key)}:${value instanceof RawJson ? value.text : JSON.stringify(value)}`,
  );
  return `{${members.join(",")}}`;
}

export function withChanges(fields: Fields, changes: Changes): Fields {
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

export interface CreateOptions {
  timestamp?: number;
  expiresIn?: number;
  name?: string;
  /** Sent and signed instead of the user's own userId. */
  userId?: string;
}

/** A create body signed over `createToken:<timestamp>:<expiresIn>:<name>:<userId>`. */
export async function createFields(user: TestUser, opts: CreateOptions = {}): Promise<Fields> {
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
export async function deleteFields(
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
export function uuidWith(version: string, variant: string): string {
  const id = randomUUID();
  return `${id.slice(0, 14)}${version}${id.slice(15, 19)}${variant}${id.slice(20)}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return assert.fail(`response body is not JSON: ${JSON.stringify(text)}`);
  }
}
