import { isIP } from "node:net";
import { Code } from "@connectrpc/connect";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import { requestAuthority } from "../http/request-url.js";
import { refuseWithStatus } from "./status-refusal.js";

const MISSING_HOST = "an HTTP/1.1 request must have a Host header";
const MALFORMED_HOST =
  "the Host (or :authority) is not host[:port]: a name, an IPv4 address or a bracketed IPv6 address, then an optional port";

export interface HostGuardOptions {
  /**
   * The names this listener answers to, besides loopback addresses and
   * `localhost`: its bound address and INTERNAL_HOSTNAMES. Undefined: every
   * name (the public listener, behind whatever name it is published under).
   * A wildcard bound address (`0.0.0.0`, `::`) admits every IP literal.
   */
  names?: readonly string[];
  /**
   * Paths answered, with everything under them, whatever the name, if the
   * authority is well-formed (forward-auth: a proxy forwards its client's Host).
   */
  anyNamePaths?: readonly string[];
}

/** A host name or IPv4 address: dot-separated labels, an optional final dot. */
const NAME = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$/;
/** An optional port: `:` and up to 5 digits (RFC 3986 allows an empty one). */
const PORT = /^(?::[0-9]{0,5})?$/;

/**
 * The host of a Host or `:authority` value, lowercase, without port, brackets
 * or a final dot; undefined when the value is not `host[:port]` as RFC 3986
 * spells it (`[::1]evil.example`, `[::1`, `127.0.0.1:evil.example`, a bare
 * `::1`, `user@host`): forms no browser sends, which name no listener.
 */
export function hostOf(authority: string): string | undefined {
  const value = authority.trim().toLowerCase();
  let host: string;
  let rest: string;
  if (value.startsWith("[")) {
    const close = value.indexOf("]");
    host = close < 0 ? "" : value.slice(1, close);
    rest = close < 0 ? "" : value.slice(close + 1);
    // No zone id (`%25eth0`): it names an interface of the client's, not this host.
    if (isIP(host) !== 6 || host.includes("%")) {
      return undefined;
    }
  } else {
    const colon = value.indexOf(":");
    host = colon < 0 ? value : value.slice(0, colon);
    rest = colon < 0 ? "" : value.slice(colon);
    if (!NAME.test(host)) {
      return undefined;
    }
  }
  if (!PORT.test(rest)) {
    return undefined;
  }
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
 * HTTP/2 stream path, which leaves a stream it refuses to the guard. A
 * malformed authority is served by no listener.
 */
export function servesAuthority(names: readonly string[] | undefined, authority: string): boolean {
  const host = hostOf(authority);
  return host !== undefined && (names === undefined || hostAllowed(host, names));
}

/**
 * `servesAuthority` for one listener, remembering the last authority asked:
 * a connection's requests all name the same one, so the hot paths parse it
 * once per run of them.
 */
export function authorityCheck(
  names: readonly string[] | undefined,
): (authority: string) => boolean {
  let last = "";
  let served = false;
  return (authority) => {
    if (authority !== last) {
      served = servesAuthority(names, authority);
      last = authority;
    }
    return served;
  };
}

/** Whether `path` is one of `paths` or under one of them (`/auth`, `/auth/x`, not `/authx`). */
function underAny(paths: readonly string[], path: string): boolean {
  return paths.some((p) => path === p || (path.startsWith(p) && path[p.length] === "/"));
}

function refuseHost(
  req: NodeServerRequest,
  res: NodeServerResponse,
  status: number,
  code: Code,
  message: string,
): true {
  // The request is not read: close rather than drain whatever it sends.
  const headers: Record<string, string> = req.httpVersionMajor === 1 ? { connection: "close" } : {};
  return refuseWithStatus(req, res, { status, code, message, headers });
}

/**
 * The checks of a request's authority, before anything else reads it.
 * RFC 9112 §3.2: an HTTP/1.1 request without `Host` is answered 400 (Node
 * would answer it itself, bare; the listener turns that off). With `names`
 * (the internal listener), a request for another name is answered 421
 * Misdirected Request, PERMISSION_DENIED: what a browser sends when a page
 * rebinds its own name to this address; `anyNamePaths` and what is under
 * them pass whatever the name. A malformed authority is answered 421 on
 * every listener and path: no listener is named by it. Both in the service's error shape,
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
      return refuseHost(req, res, 400, Code.InvalidArgument, MISSING_HOST);
    }
    if (servesAuthority(names, authority)) {
      return false;
    }
    if (hostOf(authority) === undefined) {
      return refuseHost(req, res, 421, Code.PermissionDenied, MALFORMED_HOST);
    }
    if (underAny(anyNamePaths, requestPath(req))) {
      return false;
    }
    return refuseHost(
      req,
      res,
      421,
      Code.PermissionDenied,
      "this listener does not serve that host name; call it by its address, localhost, or a name in INTERNAL_HOSTNAMES",
    );
  };
}
