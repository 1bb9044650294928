// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token, the scheme
// case-insensitive (RFC 7235 §2.1). Leading and trailing whitespace is
// already gone from a parsed header value.
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i;

/**
 * The token of an `Authorization: Bearer <token>` header value, or undefined
 * when the header is missing or is anything else (another scheme, no token,
 * characters a b64token cannot have).
 */
export function bearerTokenOf(authorization: string | null | undefined): string | undefined {
  if (typeof authorization !== "string") {
    return undefined;
  }
  return BEARER.exec(authorization)?.[1];
}
