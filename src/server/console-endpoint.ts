import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import type { ConsoleAssets } from "./console-assets.js";
import { exchangeOf } from "./exchange.js";

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
