/**
 * The first number of a create or delete script's reply `{status, retryAfterMs}`,
 * by name. The scripts get these same names (`luaConstants`), so each number
 * is written once, here.
 */
export const TokenScriptStatus = {
  /** Created (create) or deleted (delete). */
  DONE: 1,
  /** Create: a live token of the user already has this name. */
  NAME_TAKEN: 0,
  /** Delete: the user has no live token with this id. */
  NOT_FOUND: 0,
  /** The signing key is no longer registered. */
  KEY_REVOKED: -1,
  /** The signed message was already played. */
  REPLAYED: -2,
  /** The user's rate bucket is empty; retryAfterMs says when it holds a call again. */
  RATE_LIMITED: -3,
  /** Create: the user has the most live tokens allowed; retryAfterMs until the first expires. */
  TOO_MANY_TOKENS: -4,
  /** Create: this very message already created the token, which is live. */
  ALREADY_CREATED: -5,
} as const;

export type TokenScriptStatus = (typeof TokenScriptStatus)[keyof typeof TokenScriptStatus];
