// The `google.rpc.ErrorInfo` the service attaches where a client must act on
// more than the code: the service writes it, the SDK and the CLI read it.

/** `ErrorInfo.domain` of the service's error details. */
export const ERROR_DOMAIN = "perps-tokens";

/**
 * `ErrorInfo.reason` of a replayed create whose token is still live
 * (ALREADY_EXISTS); its `metadata.tokenId` names the token that request
 * created, so a client whose first answer was lost can delete it.
 */
export const TOKEN_ALREADY_CREATED = "TOKEN_ALREADY_CREATED";

/** The `@type` of a google.rpc.ErrorInfo in a JSON error body. */
export const ERROR_INFO_TYPE_URL = "type.googleapis.com/google.rpc.ErrorInfo";

/**
 * `ErrorInfo.reason` of a signed request whose `timestamp` is outside the
 * window around server time (UNAUTHENTICATED "Signature expired"). Its
 * metadata, all decimal integer text: `serverTimeMs` (the service's clock,
 * Unix ms), `offsetMs` (timestamp − server time: above 0 the caller's clock
 * is ahead, below 0 behind) and `toleranceMs`; `clock` is "ahead" or "behind".
 */
export const TIMESTAMP_OUTSIDE_WINDOW = "TIMESTAMP_OUTSIDE_WINDOW";
