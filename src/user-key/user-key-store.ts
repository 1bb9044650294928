import type { Redis, Result } from "ioredis";
import { redisKeys } from "../redis/keys.js";
import { callRedis } from "../redis/redis-failure.js";

// Adds a key unless the user already has `max` others; idempotent.
// Returns 1 stored (or already there), 0 limit reached.
const PUT_USER_KEY_LUA = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    perpsPutUserKey(keysKey: string, publicKey: string, max: string): Result<number, Context>;
  }
}

export interface UserKeyStore {
  /** Most keys one user may have at once. */
  readonly maxKeysPerUser: number;
  /** Registers a key (idempotent); "limit" when the user already has the maximum. */
  put(userKey: string, publicKey: string): Promise<"stored" | "limit">;
  /** Removes a key (idempotent). */
  delete(userKey: string, publicKey: string): Promise<void>;
}

export interface UserKeyStoreOptions {
  redis: Redis;
  /** Most keys one user may have at once (room for rotation). Default 5. */
  maxKeysPerUser?: number;
}

/** The public keys of users, one Redis set per user. */
export function createUserKeyStore(opts: UserKeyStoreOptions): UserKeyStore {
  const { redis } = opts;
  const maxKeysPerUser = opts.maxKeysPerUser ?? 5;
  const max = String(maxKeysPerUser);
  redis.defineCommand("perpsPutUserKey", { numberOfKeys: 1, lua: PUT_USER_KEY_LUA });
  return {
    maxKeysPerUser,
    async put(userKey, publicKey) {
      const result = await callRedis(() =>
        redis.perpsPutUserKey(redisKeys.userKeys(userKey), publicKey, max),
      );
      return result === 1 ? "stored" : "limit";
    },
    async delete(userKey, publicKey) {
      await callRedis(() => redis.srem(redisKeys.userKeys(userKey), publicKey));
    },
  };
}
