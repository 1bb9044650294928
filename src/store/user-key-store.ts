import type { Result } from "ioredis";
import type { RedisClient } from "../redis/redis-client.js";
import { createDurableWriter } from "./durable-writer.js";
import { redisKeysOf } from "./keys.js";
import { luaConstants, readLuaScript } from "./lua-script.js";
import { createRedisCall, type RedisCall } from "./redis-call.js";
import { StoreError } from "./store-error.js";

/** What lua/put-user-key.lua answers, by name. */
const PutKeyStatus = {
  /** Stored, or already there. */
  STORED: 1,
  /** The user already has the most keys allowed. */
  LIMIT_REACHED: 0,
} as const;

const PUT_USER_KEY_LUA = [luaConstants(PutKeyStatus), readLuaScript("put-user-key.lua")].join("\n");

declare module "ioredis" {
  interface RedisCommander<Context> {
    perpsPutUserKey(keysKey: string, publicKey: string, max: string): Result<number, Context>;
  }
}

/** Every method throws {@link StoreError} when Redis cannot do what it asks. */
export interface UserKeyStore {
  /** Most keys one user may have at once. */
  readonly maxKeysPerUser: number;
  /** Registers a key (idempotent); "limit" when the user already has the maximum. */
  put(userKey: string, publicKey: string): Promise<"stored" | "limit">;
  /** Removes a key (idempotent). */
  delete(userKey: string, publicKey: string): Promise<void>;
}

export interface UserKeyStoreOptions {
  redis: RedisClient;
  /** How each Redis operation is run (timed, failures made StoreErrors). Default: without metrics. */
  call?: RedisCall;
  /** Replicas that must confirm each write before it is acknowledged. Default 0. */
  minReplicasAck?: number;
  /** How long to wait for those confirmations. Default 500 ms. */
  waitTimeoutMs?: number;
  /** Most keys one user may have at once (room for rotation). Default 5. */
  maxKeysPerUser?: number;
}

/** The public keys of users, one Redis set per user. */
export function createUserKeyStore(opts: UserKeyStoreOptions): UserKeyStore {
  const { redis } = opts;
  const call = opts.call ?? createRedisCall();
  const maxKeysPerUser = opts.maxKeysPerUser ?? 5;
  const max = String(maxKeysPerUser);
  redis.defineCommand("perpsPutUserKey", { numberOfKeys: 1, lua: PUT_USER_KEY_LUA });
  const writer = createDurableWriter({
    redis,
    ...(opts.minReplicasAck === undefined ? {} : { minReplicasAck: opts.minReplicasAck }),
    ...(opts.waitTimeoutMs === undefined ? {} : { waitTimeoutMs: opts.waitTimeoutMs }),
  });
  return {
    maxKeysPerUser,
    async put(userKey, publicKey) {
      const key = redisKeysOf(userKey).userKeys;
      const { reply, confirmed } = await call("key.put", () =>
        writer.write(
          () => redis.perpsPutUserKey(key, publicKey, max),
          (pipeline) => pipeline.perpsPutUserKey(key, publicKey, max),
        ),
      );
      if (!confirmed) {
        throw new StoreError("unconfirmed-write");
      }
      return reply === PutKeyStatus.STORED ? "stored" : "limit";
    },
    async delete(userKey, publicKey) {
      const key = redisKeysOf(userKey).userKeys;
      const { confirmed } = await call("key.delete", () =>
        writer.write(
          () => redis.srem(key, publicKey),
          (pipeline) => pipeline.srem(key, publicKey),
        ),
      );
      if (!confirmed) {
        throw new StoreError("unconfirmed-write");
      }
    },
  };
}
