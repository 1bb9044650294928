// The Lua scripts of the token store (lua/*.lua, read once at start-up). The
// create and delete scripts share signed-call.lua, and all of them name their
// statuses (token-script-status.ts) rather than spell numbers.

import { luaConstants, readLuaScript } from "./lua-script.js";
import { TokenScriptStatus } from "./token-script-status.js";

const signedCall = [luaConstants(TokenScriptStatus), readLuaScript("signed-call.lua")];

/** Stores a token, atomic with every check; replies `{status, retryAfterMs}`. */
export const CREATE_TOKEN_LUA = [...signedCall, readLuaScript("create-token.lua")].join("\n");
/** Deletes a token, atomic with every check; replies `{status, retryAfterMs}`. */
export const DELETE_TOKEN_LUA = [...signedCall, readLuaScript("delete-token.lua")].join("\n");
/** Undoes a create that replicas did not confirm. */
export const ROLLBACK_CREATE_LUA = readLuaScript("rollback-create.lua");
/** The user's live named tokens, as a flat list: name, id, expires at ms, ... */
export const LIST_NAMED_TOKENS_LUA = readLuaScript("list-named-tokens.lua");
/** Deletes every live token of a user; replies how many. */
export const REVOKE_USER_TOKENS_LUA = [
  readLuaScript("revoke-tokens.lua"),
  readLuaScript("revoke-user-tokens.lua"),
].join("\n");
/** One token's record and expiry, or nil. */
export const LOOKUP_TOKEN_LUA = readLuaScript("lookup-token.lua");
