/**
 * Where every token of a user is revoked at once: one script
 * (lua/revoke-user-tokens.lua) deletes them, named and session, in one
 * atomic step; the token cache forgets the user's records whatever came of it.
 *
 * Tested by test/integration/token-store.test.ts, test/integration/incident-tools.test.ts, test/integration/token-cache.test.ts.
 */

import type { DurableWriter } from "./durable-writer.js";
import { forgettingAfter } from "./forgetting-after.js";
import { LIVE_MEMBER_BYTES, redisKeysOf } from "./keys.js";
import type { RedisRunner } from "./redis-runner.js";
import { StoreError } from "./store-error.js";
import type { TokenRecordCache } from "./token-record-cache.js";
import { REVOKE_USER_TOKENS } from "./token-scripts.js";

/** Deletes every live token of the user; resolves with how many there were (TokenStore's `revokeAll`). */
export type UserTokensRevoker = (userId: string) => Promise<number>;

export interface UserTokensRevokerOptions {
  runRedis: RedisRunner;
  writer: DurableWriter;
  /** The token records kept in memory, if any. */
  cache: TokenRecordCache | undefined;
}

export function createUserTokensRevoker(opts: UserTokensRevokerOptions): UserTokensRevoker {
  const { runRedis, writer, cache } = opts;
  return async (userId) => {
    const redisKeys = redisKeysOf(userId);
    const args = REVOKE_USER_TOKENS.argv(
      { names: redisKeys.names, nameIds: redisKeys.nameIds, live: redisKeys.live },
      { tokenPrefix: redisKeys.tokenPrefix, idBytes: String(LIVE_MEMBER_BYTES) },
    );
    const { reply, confirmed } = await forgettingAfter(
      () => cache?.forgetPrefix(redisKeys.tokenPrefix),
      () =>
        runRedis("token.revoke-all", () =>
          writer.revoke(
            (client) => client.perpsRevokeUserTokens(...args),
            (pipeline) => pipeline.perpsRevokeUserTokens(...args),
          ),
        ),
    );
    if (!confirmed) {
      throw new StoreError("unconfirmed-write");
    }
    return reply;
  };
}
