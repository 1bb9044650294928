import { Code } from "@connectrpc/connect";
import { TokenApiError } from "./token-api-error.js";

// Printable ASCII: what every transport can carry in a header. fetch and
// HTTP/2 throw on control or non-ASCII characters, which would otherwise
// surface as "cannot reach" (UNAVAILABLE).
const SENDABLE = /^[\x20-\x7e]*$/;

/**
 * The `authorization` header value that presents `token` (RFC 6750). A token
 * no header can carry is not one the service issued: it is refused here with
 * the service's own answer to a bad token, UNAUTHENTICATED "Invalid token",
 * without a call.
 */
export function bearerAuthorization(token: string): string {
  if (!SENDABLE.test(token)) {
    throw new TokenApiError(Code.Unauthenticated, "Invalid token");
  }
  return `Bearer ${token}`;
}
