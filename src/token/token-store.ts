import type { Redis, Result } from "ioredis";
import { redisKeys } from "../redis/keys.js";
import { callRedis } from "../redis/redis-failure.js";

// Checks and writes in one atomic step: the signing key is still registered
// (a key deleted after it was read verifies nothing), the name is free among
// live tokens (expired names are pruned first), then the token is written.
// Returns 1 created, 0 name taken, -1 signing key no longer registered.
const CREATE_TOKEN_LUA = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return -1 end
if ARGV[3] == '1' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZSCORE', KEYS[3], ARGV[4]) then return 0 end
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
  local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', KEYS[3], last[2])
end
redis.call('HSET', KEYS[2], 'h', ARGV[2], 'n', ARGV[4])
redis.call('PEXPIREAT', KEYS[2], ARGV[5])
return 1
`;

// Deletes a token and frees its name in one atomic step.
// Returns 1 deleted, 0 no such live token of this user, -1 signing key no longer registered.
const DELETE_TOKEN_LUA = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return -1 end
local name = redis.call('HGET', KEYS[2], 'n')
if not name then return 0 end
redis.call('DEL', KEYS[2])
if name ~= '' then redis.call('ZREM', KEYS[3], name) end
return 1
`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    perpsCreateToken(
      keysKey: string,
      tokenKey: string,
      namesKey: string,
      signingKey: string,
      tokenHash: string,
      named: "0" | "1",
      name: string,
      expiresAtMs: string,
    ): Result<number, Context>;
    perpsDeleteToken(
      keysKey: string,
      tokenKey: string,
      namesKey: string,
      signingKey: string,
    ): Result<number, Context>;
  }
}

export interface NewToken {
  /** Lowercase user id. */
  userKey: string;
  tokenId: string;
  /** SHA-256 (hex) of the bearer token; the token itself is never stored. */
  tokenHash: string;
  /** Undefined for a session token. */
  name: string | undefined;
  expiresAtMs: number;
  /** The public key whose signature was verified; it must still be registered. */
  signingKey: string;
}

export type CreateTokenOutcome = "created" | "name-taken" | "key-revoked";
export type DeleteTokenOutcome = "deleted" | "not-found" | "key-revoked";

export interface TokenStore {
  /** The public keys registered for a user (lowercase id). */
  userKeys(userKey: string): Promise<string[]>;
  /** Stores a token, one round trip. */
  create(token: NewToken): Promise<CreateTokenOutcome>;
  /** Deletes a live token of the user, one round trip. */
  delete(req: {
    userKey: string;
    tokenId: string;
    signingKey: string;
  }): Promise<DeleteTokenOutcome>;
}

export interface TokenStoreOptions {
  redis: Redis;
}

/** Tokens in Redis: one hash per token expiring with it, and a per-user name index. */
export function createTokenStore(opts: TokenStoreOptions): TokenStore {
  const { redis } = opts;
  redis.defineCommand("perpsCreateToken", { numberOfKeys: 3, lua: CREATE_TOKEN_LUA });
  redis.defineCommand("perpsDeleteToken", { numberOfKeys: 3, lua: DELETE_TOKEN_LUA });

  return {
    userKeys: (userKey) => callRedis(() => redis.smembers(redisKeys.userKeys(userKey))),

    async create(token) {
      const result = await callRedis(() =>
        redis.perpsCreateToken(
          redisKeys.userKeys(token.userKey),
          redisKeys.token(token.userKey, token.tokenId),
          redisKeys.names(token.userKey),
          token.signingKey,
          token.tokenHash,
          token.name === undefined ? "0" : "1",
          token.name ?? "",
          String(token.expiresAtMs),
        ),
      );
      return result === 1 ? "created" : result === 0 ? "name-taken" : "key-revoked";
    },

    async delete(req) {
      const result = await callRedis(() =>
        redis.perpsDeleteToken(
          redisKeys.userKeys(req.userKey),
          redisKeys.token(req.userKey, req.tokenId),
          redisKeys.names(req.userKey),
          req.signingKey,
        ),
      );
      return result === 1 ? "deleted" : result === 0 ? "not-found" : "key-revoked";
    },
  };
}
