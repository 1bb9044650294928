import { isIP } from "node:net";
import { Code } from "@connectrpc/connect";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import { requestAuthority } from "../http/request-url.js";
import { writeStatusAnswer } from "../status/status-answer.js";
import { exchangeOf } from "./exchange.js";

const MISSING_HOST = "an HTTP/1.1 request must have a Host header";

export interface HostGuardOptions {
  /**
   * The names this listener answers to, besides loopback addresses and
   * `localhost`: its bound address and INTERNAL_HOSTNAMES. Undefined: every
   * name (the public listener, behind whatever name it is published under).
   * A wildcard bound address (`0.0.0.0`, `::`) admits every IP literal.
   */
  names?: readonly string[];
  /** Paths answered whatever the name (forward-auth: a proxy forwards its client's Host). */
  anyNamePaths?: readonly string[];
}

/** The host of a Host or `:authority` value, lowercase, without port, brackets or a final dot. */
export function hostOf(authority: string): string {
  const value = authority.trim().toLowerCase();
  const host = value.startsWith("[")
    ? value.slice(1, value.indexOf("]") < 0 ? undefined : value.indexOf("]"))
    : value.split(":").length === 2
      ? (value.split(":")[0] ?? "")
      : value;
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

function isLoopback(host: string): boolean {
  return (
    host === "localhost" ||
    host === "::1" ||
    (isIP(host) === 4 && host.startsWith("127.")) ||
    host === "::ffff:127.0.0.1"
  );
}

/**
 * Whether a listener answering to `names` serves a request for `host`. A web
 * page whose name was pointed at this listener (DNS rebinding) sends its own
 * name, which is none of these; an IP literal cannot be rebound.
 */
export function hostAllowed(host: string, names: readonly string[]): boolean {
  if (isLoopback(host) || names.includes(host)) {
    return true;
  }
  const wildcard = names.includes("0.0.0.0") || names.includes("::");
  return wildcard && isIP(host) !== 0;
}

/**
 * Whether a listener answering to `names` (undefined: every name) serves a
 * request for `authority`: the one check of the host guard and of the raw
 * HTTP/2 stream path, which leaves a stream it refuses to the guard.
 */
export function servesAuthority(names: readonly string[] | undefined, authority: string): boolean {
  return names === undefined || hostAllowed(hostOf(authority), names);
}

function refuse(
  req: NodeServerRequest,
  res: NodeServerResponse,
  status: number,
  code: Code,
  message: string,
): true {
  exchangeOf(req)?.answers(code, message);
  // The request is not read: close rather than drain whatever it sends.
  const headers: Record<string, string> = req.httpVersionMajor === 1 ? { connection: "close" } : {};
  writeStatusAnswer(res, { status, code, message, headers });
  return true;
}

/**
 * The checks of a request's authority, before anything else reads it.
 * RFC 9112 §3.2: an HTTP/1.1 request without `Host` is answered 400 (Node
 * would answer it itself, bare; the listener turns that off). With `names`
 * (the internal listener), a request for another name is answered 421
 * Misdirected Request, PERMISSION_DENIED: what a browser sends when a page
 * rebinds its own name to this address. Both in the service's error shape,
 * with the request id, log line and count. Returns false for a request that
 * passes: HTTP/1.0 need not name the authority.
 */
export function createHostGuard(opts: HostGuardOptions = {}) {
  const { names, anyNamePaths = [] } = opts;
  return (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    const authority = requestAuthority(req);
    if (authority === undefined) {
      if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) {
        return false;
      }
      return refuse(req, res, 400, Code.InvalidArgument, MISSING_HOST);
    }
    if (servesAuthority(names, authority) || anyNamePaths.includes(requestPath(req))) {
      return false;
    }
    return refuse(
      req,
      res,
      421,
      Code.PermissionDenied,
      "this listener does not serve that host name; call it by its address, localhost, or a name in INTERNAL_HOSTNAMES",
    );
  };
}
