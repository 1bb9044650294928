// The Lua scripts of the token store (lua/*.lua, read once at start-up): first
// the statuses their replies start with, then each script with its KEYS and
// ARGV declared once (`luaScript`). The create and delete scripts share
// signed-request.lua, and both name their statuses (TokenScriptStatus) rather
// than spell numbers. Each is an ioredis command on the store's clients
// (scriptedClient, lua-script.ts), typed with its reply below.

import type { Result } from "ioredis";
import { luaScript, type ScriptArg } from "./lua-script.js";
import { TOKEN_RECORD_LUA_CONSTANTS } from "./token-record.js";

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

type ScriptReply = [status: TokenScriptStatus, retryAfterMs: number];

declare module "ioredis" {
  interface RedisCommander<Context> {
    perpsCreateToken(...keysAndArgs: ScriptArg[]): Result<ScriptReply, Context>;
    perpsDeleteToken(...keysAndArgs: ScriptArg[]): Result<ScriptReply, Context>;
    perpsRollbackCreate(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    perpsListNamedTokensBuffer(
      ...keysAndArgs: ScriptArg[]
    ): Result<[TokenScriptStatus, number, ...(Buffer | number)[]], Context>;
    perpsRevokeUserTokens(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    perpsTouchToken(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    perpsLookupTokenBuffer(
      ...keysAndArgs: ScriptArg[]
    ): Result<[record: Buffer, expiresAtMs: number] | null, Context>;
  }
}

/** The user's keys a signed call touches (signed-request.lua); `token` is the call's token. */
const SIGNED_REQUEST_KEYS = [
  "publicKeys",
  "token",
  "names",
  "live",
  "replay",
  "rate",
  "nameIds",
] as const;
/** What a signed call brings and the limits it is held to. */
const SIGNED_REQUEST_ARGS = [
  "signerPublicKey",
  "messageDigest",
  "replayWindowMs",
  "rateCapacity",
  "ratePeriodMs",
] as const;

/** Stores a token, atomic with every check; replies `{status, retryAfterMs}`. */
export const CREATE_TOKEN = luaScript({
  command: "perpsCreateToken",
  keys: SIGNED_REQUEST_KEYS,
  args: [
    ...SIGNED_REQUEST_ARGS,
    /** The token's value (token-record.ts). */
    "record",
    /** Its member of the live zset (its id's raw bytes). */
    "liveMember",
    /** "1" for a named token, "0" for a session token. */
    "named",
    "name",
    "expiresAtMs",
    "maxActive",
    "tokenId",
  ],
  files: ["rate-bucket.lua", "signed-request.lua", "create-token.lua"],
  constants: TokenScriptStatus,
});

/** Deletes a token, atomic with every check; replies `{status, retryAfterMs}`. */
export const DELETE_TOKEN = luaScript({
  command: "perpsDeleteToken",
  keys: SIGNED_REQUEST_KEYS,
  args: [
    ...SIGNED_REQUEST_ARGS,
    "liveMember",
    "tokenId",
    /** Bytes of a live member from before ids: the digest's first bytes. */
    "legacyLiveMemberBytes",
  ],
  files: ["rate-bucket.lua", "signed-request.lua", "token-record.lua", "delete-token.lua"],
  // The record's layout, from its one declaration (token-record.ts).
  constants: { ...TokenScriptStatus, ...TOKEN_RECORD_LUA_CONSTANTS },
});

/**
 * Undoes one attempt of a create that replicas did not confirm, or whose
 * reply was lost, only while the token's key holds that attempt's record;
 * replies 1 if it undid it, 0 if it touched nothing.
 */
export const ROLLBACK_CREATE = luaScript({
  command: "perpsRollbackCreate",
  keys: ["token", "names", "live", "replay", "nameIds"],
  args: [
    /** The record the attempt's create stores (its CREATE_TOKEN `record`): it names the attempt. */
    "record",
    "name",
    "liveMember",
    "messageDigest",
    "tokenId",
  ],
  files: ["rollback-create.lua"],
});

/**
 * One page of the user's live named tokens, after taking a call from the
 * list rate bucket: `{RATE_LIMITED, retryAfterMs}` or `{DONE, 0, more,
 * lastExpiresAtMs, lastName, name, id, expires at ms, record, last use, ...}`.
 */
export const LIST_NAMED_TOKENS = luaScript({
  command: "perpsListNamedTokens",
  keys: ["names", "nameIds", "listRate"],
  args: [
    /** The user's token keys' prefix (keys.ts): a token's key is it and the id. */
    "tokenPrefix",
    /** The user's last-use keys' prefix (keys.ts), as tokenPrefix. */
    "lastUsePrefix",
    "rateCapacity",
    "ratePeriodMs",
    /** Most tokens in the page. */
    "pageSize",
    /** Where the page resumes: after this (expiry, name); "" and "" for the first page. */
    "afterExpiresAtMs",
    "afterName",
  ],
  files: ["rate-bucket.lua", "list-named-tokens.lua"],
  constants: TokenScriptStatus,
});

/** Deletes every live token of a user; replies how many. */
export const REVOKE_USER_TOKENS = luaScript({
  command: "perpsRevokeUserTokens",
  keys: ["names", "nameIds", "live"],
  args: ["tokenPrefix", "idBytes"],
  files: ["revoke-tokens.lua", "revoke-user-tokens.lua"],
});

/** One token's record and expiry, or nil (records of layout 0, which do not hold their expiry). */
export const LOOKUP_TOKEN = luaScript({
  command: "perpsLookupToken",
  keys: ["token"],
  args: [],
  files: ["lookup-token.lua"],
});

/** Records a token's last use, while it lives and only forward in time; replies 1 when written. */
export const TOUCH_TOKEN = luaScript({
  command: "perpsTouchToken",
  keys: ["token", "lastUse"],
  args: [
    /** The instant of the use, Unix ms, to the minute. */
    "usedAtMs",
  ],
  files: ["touch-token.lua"],
});

/** Every script of the token store. */
export const TOKEN_SCRIPTS = [
  CREATE_TOKEN,
  DELETE_TOKEN,
  ROLLBACK_CREATE,
  LIST_NAMED_TOKENS,
  REVOKE_USER_TOKENS,
  LOOKUP_TOKEN,
  TOUCH_TOKEN,
] as const;
