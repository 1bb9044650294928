import assert from "node:assert/strict";
import { isWellFormedToken } from "@perps/token-client/protocol";
import type fc from "fast-check";

// Answer checks and fast-check parameters of the hostile-input suites
// (hostile-input.test.ts, forged-requests.test.ts).

export const PATH = "/user/tokens";
export const MAX_BODY_BYTES = 64 * 1024;
export const IDENTITY_KEY = `01${"00".repeat(31)}`;
export const SOME_USER_ID = "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab";

/** Fixed seed per property, unless FUZZ_SEED overrides them all. */
export function seed(fixed: number): number {
  const override = process.env.FUZZ_SEED;
  return override === undefined || override === "" ? fixed : Number(override);
}

/** fast-check options: seeded, bounded, no shrinking (each run is a network round trip). */
export function runs(fixedSeed: number, numRuns: number): fc.Parameters<unknown> {
  return { seed: seed(fixedSeed), numRuns, endOnFailure: true, includeErrorInReport: true };
}

// ---------------------------------------------------------------------------
// HTTP helpers

export interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
}

export const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** A short printable form of a request body, for assertion messages. */
export function show(body: Uint8Array | undefined): string {
  if (body === undefined) {
    return "(no body)";
  }
  const text = Buffer.from(body).toString("utf8");
  const shown = text.length > 300 ? `${text.slice(0, 300)}… (${body.byteLength} bytes)` : text;
  return JSON.stringify(shown);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// HTTP status → the gRPC codes the REST error body may carry with it
// (client/src/protocol/http-status.ts, plus the HTTP-level 404/405/413/415).
export const REST_CODES_BY_STATUS: Record<number, readonly number[]> = {
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
export function assertRestError(res: HttpAnswer, context: string, method = "POST"): void {
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
export function assertCreated(res: HttpAnswer, status: number, context: string): string {
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
