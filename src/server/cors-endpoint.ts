import { Code } from "@connectrpc/connect";
import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import type { RouteTable } from "../rest/route-table.js";
import { refuseWithStatus } from "./status-refusal.js";

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
