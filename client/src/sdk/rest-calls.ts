import { Code } from "@connectrpc/connect";
import { connectCodeFromHttpStatus } from "../protocol/http-status.js";
import { isErrorCode } from "../protocol/status-code.js";
import { clockOffsetOfJsonDetails } from "./clock-offset-detail.js";
import { createdTokenIdOfJsonDetails } from "./created-token-detail.js";
import { REDIRECT_MODE, redirectRefusal } from "./redirect-refusal.js";
import { parseRetryAfter } from "./retry-after.js";
import { TokenApiError } from "./token-api-error.js";
import type {
  CallSettings,
  CreatedToken,
  PageRequest,
  SignedCreateRequest,
  SignedDeleteRequest,
  TokenCalls,
  TokenPage,
  TokenSummary,
} from "./token-calls.js";

/** Options of {@link createRestCalls}. */
export interface RestCallsOptions {
  /** Base URL of the public listener; `/user/tokens` is appended to its path. */
  baseUrl: string;
  /** The fetch to use. */
  fetch: typeof globalThis.fetch;
  /** Deadline of each call in milliseconds. */
  timeoutMs: number;
}

type JsonFields = Record<string, string | bigint | readonly string[] | undefined>;

// int64 fields go out as JSON numbers, as the REST contract requires; the
// client only signs safe integers, so Number() is exact.
function jsonBody(fields: JsonFields): string {
  return JSON.stringify(fields, (_key, value: unknown) =>
    typeof value === "bigint" ? Number(value) : value,
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function readJson(res: Response): Promise<unknown> {
  try {
    return await res.json();
  } catch {
    return undefined;
  }
}

async function errorFromResponse(res: Response): Promise<TokenApiError> {
  const body = await readJson(res);
  const opts = {
    httpStatus: res.status,
    retryAfterSeconds: parseRetryAfter(res.headers.get("retry-after"), Date.now()),
  };
  if (isRecord(body) && isErrorCode(body.code) && typeof body.message === "string") {
    const createdTokenId = createdTokenIdOfJsonDetails(body.details);
    return new TokenApiError(body.code, body.message, {
      ...opts,
      ...(createdTokenId === undefined ? {} : { createdTokenId }),
      ...clockOffsetOfJsonDetails(body.details),
    });
  }
  // Not the service's status JSON: something in between answered.
  return new TokenApiError(
    connectCodeFromHttpStatus(res.status),
    `HTTP ${res.status} ${res.statusText}`.trim(),
    opts,
  );
}

/** The named string fields of a JSON object, in the order named; undefined unless all are there. */
function stringFields<K extends string>(
  value: unknown,
  names: readonly K[],
): Record<K, string> | undefined {
  if (!isRecord(value)) {
    return undefined;
  }
  const fields: Partial<Record<K, string>> = {};
  for (const name of names) {
    const field = value[name];
    if (typeof field !== "string") {
      return undefined;
    }
    fields[name] = field;
  }
  return fields as Record<K, string>;
}

function createdToken(body: unknown): CreatedToken {
  const created = stringFields(body, ["id", "token", "expiresAt"]);
  if (created !== undefined) {
    return created;
  }
  throw new TokenApiError(Code.Internal, "unexpected response: expected {expiresAt, id, token}");
}

/**
 * Every field of TokenSummary (token.proto) by its JSON shape: `satisfies`
 * makes tsc refuse a table that misses one, so a field added there is
 * added here.
 */
const TOKEN_SUMMARY_SHAPE = {
  id: "string",
  name: "string",
  expiresAt: "string",
  expiresAtTime: "string",
  scopes: "list",
  allowedIps: "list",
  createdAt: "optional",
  lastUsedAt: "optional",
} as const satisfies Record<keyof TokenSummary, "string" | "list" | "optional">;

function tokenSummary(entry: unknown): TokenSummary | undefined {
  if (!isRecord(entry)) {
    return undefined;
  }
  const summary: Record<string, string | string[] | undefined> = {};
  for (const [name, shape] of Object.entries(TOKEN_SUMMARY_SHAPE)) {
    // proto3 JSON may leave out a field holding its default ("", []).
    const value = entry[name];
    if (shape === "list") {
      if (
        value !== undefined &&
        !(Array.isArray(value) && value.every((v) => typeof v === "string"))
      ) {
        return undefined;
      }
      summary[name] = value ?? [];
    } else if (value === undefined) {
      summary[name] = shape === "string" ? "" : undefined;
    } else if (typeof value === "string") {
      summary[name] = value;
    } else {
      return undefined;
    }
  }
  return summary as unknown as TokenSummary;
}

function tokenPage(body: unknown): TokenPage {
  // Both fields are left out of the JSON when empty (proto3 defaults).
  if (isRecord(body) && (body.tokens === undefined || Array.isArray(body.tokens))) {
    const tokens = (body.tokens ?? []).map(tokenSummary);
    const next = body.nextPageToken ?? "";
    if (tokens.every((t) => t !== undefined) && typeof next === "string") {
      return { tokens, nextPageToken: next };
    }
  }
  throw new TokenApiError(
    Code.Internal,
    `unexpected response: expected {tokens: [{${Object.keys(TOKEN_SUMMARY_SHAPE).sort().join(", ")}}], nextPageToken}`,
  );
}

/** The query of a page request: only the fields given. */
function pageQuery(page: PageRequest): string {
  const query = new URLSearchParams();
  if (page.pageSize !== undefined) {
    query.set("pageSize", String(page.pageSize));
  }
  if (page.pageToken !== undefined && page.pageToken !== "") {
    query.set("pageToken", page.pageToken);
  }
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}

/** One request: its method, and either a JSON body or the headers of a GET. */
type RestRequest =
  | { method: "POST" | "DELETE"; fields: JsonFields }
  | { method: "GET"; headers: Record<string, string>; query: string };

/** The "rest" transport: the JSON contract of `POST`, `DELETE` and `GET /user/tokens`, over fetch. */
export function createRestCalls(opts: RestCallsOptions): TokenCalls {
  const url = `${opts.baseUrl.replace(/\/+$/, "")}/user/tokens`;

  async function send(req: RestRequest, settings: CallSettings): Promise<Response> {
    const deadline = AbortSignal.timeout(opts.timeoutMs);
    const signal =
      settings.signal === undefined ? deadline : AbortSignal.any([settings.signal, deadline]);
    try {
      const res = await opts.fetch(req.method === "GET" ? `${url}${req.query}` : url, {
        method: req.method,
        ...(req.method === "GET"
          ? { headers: req.headers }
          : { headers: { "content-type": "application/json" }, body: jsonBody(req.fields) }),
        signal,
        redirect: REDIRECT_MODE,
      });
      const redirect = redirectRefusal(res, url);
      if (redirect !== undefined) {
        await res.body?.cancel();
        // UNKNOWN, as an unexpected HTTP status is on every transport: retrying cannot help.
        throw new TokenApiError(Code.Unknown, redirect, {
          ...(res.status === 0 ? {} : { httpStatus: res.status }),
        });
      }
      if (!res.ok) {
        throw await errorFromResponse(res);
      }
      return res;
    } catch (err) {
      if (err instanceof TokenApiError) {
        throw err;
      }
      // Same codes as connect gives for these on the other transports.
      if (deadline.aborted) {
        throw new TokenApiError(Code.DeadlineExceeded, "the call timed out", { cause: err });
      }
      if (settings.signal?.aborted === true) {
        throw new TokenApiError(Code.Canceled, "the call was cancelled", { cause: err });
      }
      throw new TokenApiError(Code.Unavailable, `cannot reach ${url}`, { cause: err });
    }
  }

  return {
    async createToken(req: SignedCreateRequest, settings: CallSettings) {
      const res = await send({ method: "POST", fields: { ...req } }, settings);
      return createdToken(await readJson(res));
    },
    async deleteToken(req: SignedDeleteRequest, settings: CallSettings) {
      const res = await send({ method: "DELETE", fields: { ...req } }, settings);
      await readJson(res); // drains the body, so the connection can be reused
    },
    async listTokens(authorization: string, page: PageRequest, settings: CallSettings) {
      const res = await send(
        { method: "GET", headers: { authorization }, query: pageQuery(page) },
        settings,
      );
      return tokenPage(await readJson(res));
    },
    close() {
      // fetch manages its own connections.
    },
  };
}
