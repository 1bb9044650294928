import assert from "node:assert/strict";
import { connect as connectHttp2, type IncomingHttpHeaders } from "node:http2";
import { isWellFormedToken } from "@perps/token-client/protocol";
import { isRecord, openApi, PATH, parseJson, UNAUTHENTICATED } from "./rest-contract-bodies.js";

// Answer checks of the REST contract suites (rest-*.test.ts).

export interface RestResponse {
  status: number;
  headers: Headers;
  text: string;
}

export function describeResponse(res: RestResponse): string {
  return `HTTP ${res.status} ${res.text}`;
}

/**
 * Asserts the google.rpc.Status error body: exactly code, message and
 * details (empty), as application/json. `code` undefined: any non-OK code.
 */
export function assertError(
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

export interface Created {
  expiresAt: string;
  id: string;
  token: string;
}

/** The 401 of a timestamp outside the time window. */
export function assertExpired(res: RestResponse): void {
  assertError(res, 401, UNAUTHENTICATED, "Signature expired");
}

export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Asserts a 201 create answer whose expiresAt is the UTC date of server time + lifetime. */
export function assertCreated(
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

export function assertDeleted(res: RestResponse): void {
  assert.equal(res.status, 200, describeResponse(res));
  assert.match(res.headers.get("content-type") ?? "", /^application\/json(;|$)/);
  assert.deepEqual(parseJson(res.text), {});
}

export interface H2Response {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** node:http2 response headers as fetch Headers, pseudo-headers left out. */
export function fetchHeaders(h2: IncomingHttpHeaders): Headers {
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
export function h2Request(
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
