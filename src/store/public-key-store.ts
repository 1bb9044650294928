// The users' registered public keys: put, delete (which revokes the user's
// tokens) and list, each one script in the user's slot.
//
// Tested by test/integration/user-key-service.test.ts, test/integration/incident-tools.test.ts.

import type { Result } from "ioredis";
import type { RedisHolder } from "../redis/redis-holder.js";
import { createDurableWriter } from "./durable-writer.js";
import { LIVE_MEMBER_BYTES, redisKeysOf } from "./keys.js";
import { luaScript, type ScriptArg, scriptedClient } from "./lua-script.js";
import { createRedisRunner, type RedisRunner } from "./redis-runner.js";
import { StoreError } from "./store-error.js";
import type { TokenRecordCache } from "./token-record-cache.js";

/** What lua/put-user-key.lua answers, by name. */
const PutKeyStatus = {
  /** Stored, or already there. */
  STORED: 1,
  /** The user already has the most keys allowed. */
  LIMIT_REACHED: 0,
} as const;

/** Adds a key unless the user has the most allowed; replies a PutKeyStatus. */
export const PUT_USER_KEY = luaScript({
  command: "perpsPutUserKey",
  keys: ["publicKeys", "publicKeysAdded"],
  args: ["publicKey", "maxKeys"],
  files: ["put-user-key.lua"],
  constants: PutKeyStatus,
});
/** Removes a key and, when it was there, revokes the user's tokens; replies `{removed, revoked}`. */
export const DELETE_USER_KEY = luaScript({
  command: "perpsDeleteUserKey",
  keys: ["publicKeys", "publicKeysAdded", "names", "nameIds", "live"],
  args: ["publicKey", "tokenPrefix", "idBytes"],
  files: ["revoke-tokens.lua", "delete-user-key.lua"],
});
/** The user's keys and when each was added, flat. */
export const LIST_USER_KEYS = luaScript({
  command: "perpsListUserKeys",
  keys: ["publicKeys", "publicKeysAdded"],
  args: [],
  files: ["list-user-keys.lua"],
});
/** Every script of the public-key store. */
export const PUBLIC_KEY_SCRIPTS = [PUT_USER_KEY, DELETE_USER_KEY, LIST_USER_KEYS] as const;

declare module "ioredis" {
  interface RedisCommander<Context> {
    perpsPutUserKey(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    perpsDeleteUserKey(
      ...keysAndArgs: ScriptArg[]
    ): Result<[removed: number, revokedTokens: number], Context>;
    perpsListUserKeys(...keysAndArgs: ScriptArg[]): Result<string[], Context>;
  }
}

/** A registered key, as listed. */
export interface RegisteredKey {
  /** 64 lowercase hex characters. */
  publicKey: string;
  /** When it was registered (Unix ms, Redis' clock); undefined when not recorded. */
  addedAtMs: number | undefined;
}

/** What removing a key did. */
export interface DeletedKey {
  /** False when the key was not registered (nothing changed). */
  removed: boolean;
  /** Live tokens of the user revoked with the key (0 unless `removed`). */
  revokedTokens: number;
}

/** Every method throws {@link StoreError} when Redis cannot do what it asks. */
export interface PublicKeyStore {
  /** Most keys one user may have at once. */
  readonly maxKeysPerUser: number;
  /** Registers a key (idempotent); "limit" when the user already has the maximum. */
  put(userId: string, publicKey: string): Promise<"stored" | "limit">;
  /**
   * Removes a key (idempotent) and, when it was registered, revokes every
   * live token of the user in the same atomic step.
   */
  delete(userId: string, publicKey: string): Promise<DeletedKey>;
  /** The user's keys with when each was added, in no particular order. One round trip. */
  list(userId: string): Promise<RegisteredKey[]>;
}

export interface PublicKeyStoreOptions {
  redis: RedisHolder;
  /** Connections for writes that wait for replicas (durable-writer.ts). Default: `redis`. */
  waitLanes?: readonly RedisHolder[];
  /** How each Redis operation is run (timed, failures made StoreErrors). Default: without metrics. */
  runRedis?: RedisRunner;
  /** Replicas that must confirm each write before it is acknowledged. Default 0. */
  minReplicasAck?: number;
  /** Replicas that must confirm a key's removal (it revokes tokens), asked at each. Default: `minReplicasAck`. */
  revocationReplicasAck?: () => number;
  /** How long to wait for those confirmations (REDIS_WAIT_TIMEOUT_MS). */
  waitTimeoutMs: number;
  /** Most keys one user may have at once (room for rotation). Default 5. */
  maxKeysPerUser?: number;
  /** The token records kept in memory: a removed key's revoked tokens are forgotten before it answers. */
  tokenCache?: TokenRecordCache;
}

/** The public keys of users, one Redis set per user and the date each was added. */
export function createPublicKeyStore(opts: PublicKeyStoreOptions): PublicKeyStore {
  const redis = scriptedClient(opts.redis, PUBLIC_KEY_SCRIPTS);
  const runRedis = opts.runRedis ?? createRedisRunner();
  const maxKeysPerUser = opts.maxKeysPerUser ?? 5;
  const max = String(maxKeysPerUser);
  const writer = createDurableWriter({
    redis,
    ...(opts.waitLanes === undefined
      ? {}
      : { lanes: opts.waitLanes.map((lane) => scriptedClient(lane, PUBLIC_KEY_SCRIPTS)) }),
    ...(opts.minReplicasAck === undefined ? {} : { minReplicasAck: opts.minReplicasAck }),
    ...(opts.revocationReplicasAck === undefined
      ? {}
      : { revocationReplicasAck: opts.revocationReplicasAck }),
    waitTimeoutMs: opts.waitTimeoutMs,
  });
  return {
    maxKeysPerUser,
    async put(userId, publicKey) {
      const redisKeys = redisKeysOf(userId);
      const args = PUT_USER_KEY.argv(
        { publicKeys: redisKeys.publicKeys, publicKeysAdded: redisKeys.publicKeysAdded },
        { publicKey, maxKeys: max },
      );
      const { reply, confirmed } = await runRedis("key.put", () =>
        writer.write(
          (client) => client.perpsPutUserKey(...args),
          (pipeline) => pipeline.perpsPutUserKey(...args),
        ),
      );
      if (!confirmed) {
        throw new StoreError("unconfirmed-write");
      }
      return reply === PutKeyStatus.STORED ? "stored" : "limit";
    },
    async delete(userId, publicKey) {
      const redisKeys = redisKeysOf(userId);
      const args = DELETE_USER_KEY.argv(
        {
          publicKeys: redisKeys.publicKeys,
          publicKeysAdded: redisKeys.publicKeysAdded,
          names: redisKeys.names,
          nameIds: redisKeys.nameIds,
          live: redisKeys.live,
        },
        { publicKey, tokenPrefix: redisKeys.tokenPrefix, idBytes: String(LIVE_MEMBER_BYTES) },
      );
      try {
        const { reply, confirmed } = await runRedis("key.delete", () =>
          writer.revoke(
            (client) => client.perpsDeleteUserKey(...args),
            (pipeline) => pipeline.perpsDeleteUserKey(...args),
          ),
        );
        if (!confirmed) {
          throw new StoreError("unconfirmed-write");
        }
        const [removed, revokedTokens] = reply;
        return { removed: removed === 1, revokedTokens };
      } finally {
        // Whatever came of it (a timeout may hide a done revocation): the
        // user's cached tokens are dropped before the answer.
        opts.tokenCache?.forgetPrefix(redisKeys.tokenPrefix);
      }
    },
    async list(userId) {
      const redisKeys = redisKeysOf(userId);
      const flat = await runRedis(
        "key.list",
        () =>
          redis().perpsListUserKeys(
            ...LIST_USER_KEYS.argv(
              { publicKeys: redisKeys.publicKeys, publicKeysAdded: redisKeys.publicKeysAdded },
              {},
            ),
          ),
        "read",
      );
      const listed: RegisteredKey[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const added = flat[i + 1];
        listed.push({
          publicKey: flat[i] ?? "",
          addedAtMs: added === undefined || added === "" ? undefined : Number(added),
        });
      }
      return listed;
    },
  };
}
