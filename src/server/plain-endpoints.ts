// The plain HTTP endpoints of the listeners, beside the RPCs and the REST
// API: health (`/healthz`, `/readyz`), the token console (`/` and
// `/console/`), CORS for the REST API, and the method guard that answers 405
// on their paths. Each is an Endpoint: it answers a request and returns
// true, or returns false to let the request go on. The metrics, OpenAPI and
// forward-auth endpoints live beside what they serve.

import { Code } from "@connectrpc/connect";
import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import type { RouteTable } from "../rest/route-table.js";
import type { ConsoleAssets } from "./console-assets.js";
import { exchangeOf } from "./exchange.js";
import type { ReadinessProbe } from "./readiness.js";
import { refuseWithStatus } from "./status-refusal.js";

// Health.

function sendJson(
  req: NodeServerRequest,
  res: NodeServerResponse,
  status: number,
  body: object,
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  // HEAD: the same status and headers, no body (balancers that probe with HEAD).
  res.end(req.method === "HEAD" ? "" : text);
}

/**
 * `GET /healthz` (liveness: 200 while the process serves) and `GET /readyz`
 * (200 while Redis answers and the service is not stopping, else 503), and
 * HEAD of both. Returns false for any other request (other methods are
 * answered 405 by the listener's method guard).
 */
export function createHealthEndpoints(ready: ReadinessProbe): Endpoint {
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return false;
    }
    const path = requestPath(req);
    if (path === "/healthz") {
      sendJson(req, res, 200, { status: "ok" });
      return true;
    }
    if (path === "/readyz") {
      void ready().then((status) =>
        sendJson(req, res, status === "not ready" ? 503 : 200, { status }),
      );
      return true;
    }
    return false;
  };
  return { answer, probe: true };
}

// The token console.

/** The method label of the console's answers in the log and in perps_token_requests_total. */
export const CONSOLE_METHOD = "console";

/**
 * What the browser may do with the console's answers: run and style nothing
 * but the console's own files, talk to nothing but this origin, be framed by
 * no one; Trusted Types with no policy, so no script can write HTML into the
 * page. Sent on every file, not only the page, so that a file opened on its
 * own is as confined.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  // Revalidated on each load (an ETag makes that a 304): a new build is seen at once.
  "cache-control": "no-cache",
};

function acceptsGzip(req: NodeServerRequest): boolean {
  const accepted = req.headers["accept-encoding"];
  return typeof accepted === "string" && /\bgzip\b(?!;q=0(\.0*)?(,|$))/.test(accepted);
}

/**
 * The token console: `GET /` (and HEAD) is its page, `/console/<file>` its
 * script, style and icon, each with the security headers above, an ETag
 * (304 to a matching If-None-Match) and gzip when accepted. Returns false for
 * anything else, so the caller passes it on (like createHealthEndpoints).
 */
export function createConsoleEndpoint(assets: ConsoleAssets): Endpoint {
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return false;
    }
    const file = assets.get(req.url?.split("?")[0] ?? "");
    if (file === undefined) {
      return false;
    }
    const exchange = exchangeOf(req);
    if (exchange !== undefined) {
      exchange.method = CONSOLE_METHOD;
    }
    const headers: Record<string, string> = {
      ...SECURITY_HEADERS,
      "content-type": file.contentType,
      etag: file.etag,
      vary: "accept-encoding",
    };
    const known = req.headers["if-none-match"]?.split(",").map((tag) => tag.trim());
    if (known?.includes(file.etag) === true) {
      res.writeHead(304, headers);
      res.end();
      return true;
    }
    const gzip = acceptsGzip(req);
    const body = gzip ? file.gzip : file.body;
    res.writeHead(200, {
      ...headers,
      ...(gzip ? { "content-encoding": "gzip" } : {}),
      "content-length": String(body.byteLength),
    });
    if (req.method === "HEAD") {
      res.end();
    } else {
      res.end(body);
    }
    return true;
  };
  return { answer };
}

// CORS.

/** The method label of preflight answers in the log and in perps_token_requests_total. */
export const CORS_PREFLIGHT_METHOD = "cors-preflight";

/** Request headers a page may send: the SDK's and the REST API's, and a caller's request id. */
const ALLOWED_HEADERS = "authorization, content-type, x-request-id";
/** Response headers a page may read: the request id, the SDK's Retry-After, the bearer challenge. */
const EXPOSED_HEADERS = "retry-after, www-authenticate, x-request-id";

export interface CorsOptions {
  /** Origins allowed, exactly as browsers send `Origin` (`https://app.example.com`); not empty. */
  origins: readonly string[];
  /** The REST routes: CORS covers their paths, and a preflight allows their methods. */
  routes: RouteTable;
  /** How long a browser may keep a preflight's answer, in seconds. Default 600. */
  maxAgeSeconds?: number;
}

/**
 * CORS for the REST API on the public listener, for browser apps served from
 * the listed origins: a preflight (`OPTIONS` with `Origin` and
 * `Access-Control-Request-Method`) on a REST path answers 204 with what a
 * listed origin may do there, or 403 without any grant for an origin not
 * listed; an answer to a listed origin carries `Access-Control-Allow-Origin`
 * with that origin (never `*`) and the headers it may read. No credentials
 * are granted: the API authenticates by signatures and bearer headers, never
 * cookies. Every answer on a REST path varies by `Origin`. Requests without
 * `Origin` (servers, same-origin GETs) and other paths are untouched.
 * Returns true when it answered (a preflight), false to let the request go on.
 */
export function createCorsEndpoint(opts: CorsOptions): Endpoint {
  const origins = new Set(opts.origins);
  const maxAge = String(opts.maxAgeSeconds ?? 600);
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    const match = opts.routes.matchRequest(req);
    if (match.kind === "not-found") {
      return false;
    }
    res.setHeader("vary", "Origin");
    const origin = req.headers.origin;
    const preflight =
      req.method === "OPTIONS" &&
      origin !== undefined &&
      req.headers["access-control-request-method"] !== undefined;
    if (!preflight) {
      if (origin !== undefined && origins.has(origin)) {
        res.setHeader("access-control-allow-origin", origin);
        res.setHeader("access-control-expose-headers", EXPOSED_HEADERS);
      }
      return false;
    }
    if (!origins.has(origin)) {
      return refuseWithStatus(req, res, {
        status: 403,
        code: Code.PermissionDenied,
        message: "origin not allowed (CORS_ORIGINS)",
        unsized: true,
      });
    }
    // OPTIONS itself has no route, so the path's routes are all in `allow`.
    const methods = match.kind === "method-not-allowed" ? match.allow : [match.route.httpMethod];
    res.writeHead(204, {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": methods.join(", "),
      "access-control-allow-headers": ALLOWED_HEADERS,
      "access-control-max-age": maxAge,
    });
    res.end();
    return true;
  };
  return { answer, label: CORS_PREFLIGHT_METHOD };
}

// The method guard: after the endpoints above.

export interface MethodGuardOptions {
  /** Paths of the plain endpoints served (the query is ignored). */
  paths: readonly string[];
  /** The methods they answer. Default GET and HEAD. */
  allow?: readonly string[];
}

/**
 * The 405 of the plain endpoints (`/healthz`, `/metrics`...): a request to
 * one of `paths` with a method they do not serve is answered 405 with
 * `Allow`, in the service's error shape (as the REST gateway answers a method
 * its routes do not serve); returns false for any other request. Put after
 * the endpoints themselves.
 */
export function createMethodGuard(opts: MethodGuardOptions): Endpoint {
  const paths = new Set(opts.paths);
  const allowed = opts.allow ?? ["GET", "HEAD"];
  const allow = allowed.join(", ");
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    const method = req.method ?? "";
    if (allowed.includes(method) || !paths.has(requestPath(req))) {
      return false;
    }
    const message = `method ${method} is not allowed here`;
    return refuseWithStatus(req, res, {
      status: 405,
      code: Code.Unimplemented,
      message,
      headers: { allow, "cache-control": "no-store" },
    });
  };
  return { answer };
}
