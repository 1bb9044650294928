import type { NodeServerRequest } from "./node-handler.js";

/**
 * The authority a request names: HTTP/2's `:authority` (else its `Host`, as
 * node's `authority` reads it), HTTP/1's `Host`; undefined when it names
 * none (HTTP/1.0 may omit it).
 */
export function requestAuthority(req: NodeServerRequest): string | undefined {
  return "authority" in req ? req.authority : req.headers.host;
}

/** The URL a request over `socket` for `authority` and `path` was sent to: https over TLS. */
export function urlOf(
  socket: object | undefined,
  authority: string | undefined,
  path: string,
): string {
  const encrypted = socket !== undefined && "encrypted" in socket && socket.encrypted === true;
  return `${encrypted ? "https" : "http"}://${authority}${path}`;
}

/** The URL a request was sent to, as a call's `url` gives it. */
export function requestUrl(req: NodeServerRequest): string {
  return urlOf(req.socket, requestAuthority(req), req.url ?? "");
}
