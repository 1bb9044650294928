// RFC 7235 §2.1: credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ],
// the scheme case-insensitive; RFC 6750 §2.1: "Bearer" 1*SP b64token.
// Leading and trailing whitespace is already gone from a parsed header value.
const BEARER_SCHEME = /^Bearer(?:[ \t]+|$)/i;

/**
 * What an `Authorization` header presents as a bearer token: undefined when
 * the header is missing or uses another scheme (no bearer credentials: the
 * caller is told a token is required), else whatever follows "Bearer", even
 * empty or malformed, since a malformed token is an invalid token (RFC 6750
 * §3.1 `invalid_token`) and is refused as one by the token's own checks.
 */
export function bearerTokenOf(authorization: string | null | undefined): string | undefined {
  if (typeof authorization !== "string") {
    return undefined;
  }
  const scheme = BEARER_SCHEME.exec(authorization);
  return scheme === null ? undefined : authorization.slice(scheme[0].length);
}
