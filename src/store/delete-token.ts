/**
 * Where a token is deleted: one script (lua/delete-token.lua) that checks
 * the signed call and deletes the token, atomic with every check; the
 * token cache forgets the record whatever came of it.
 *
 * Tested by test/integration/token-store.test.ts, test/integration/token-cache.test.ts.
 */

import type { DurableWriter } from "./durable-writer.js";
import { forgettingAfter } from "./forgetting-after.js";
import { LEGACY_LIVE_MEMBER_BYTES, liveMemberOf, redisKeysOf } from "./keys.js";
import type { RedisRunner } from "./redis-runner.js";
import {
  type RequestRefusal,
  refusal,
  type SignedRequest,
  type SignedRequestLimits,
  signedRequestArgs,
  signedRequestKeys,
} from "./signed-request.js";
import { StoreError } from "./store-error.js";
import type { TokenRecordCache } from "./token-record-cache.js";
import { TokenScriptStatus as Status } from "./token-script-status.js";
import { DELETE_TOKEN } from "./token-scripts.js";

export type DeleteTokenOutcome = { kind: "deleted" } | { kind: "not-found" } | RequestRefusal;

/** Deletes a live token of the user (TokenStore's `delete`). */
export type TokenDeleter = (
  call: SignedRequest & { tokenId: string },
) => Promise<DeleteTokenOutcome>;

export interface TokenDeleterOptions {
  runRedis: RedisRunner;
  writer: DurableWriter;
  limits: SignedRequestLimits;
  /** The token records kept in memory, if any. */
  cache: TokenRecordCache | undefined;
}

export function createTokenDeleter(opts: TokenDeleterOptions): TokenDeleter {
  const { runRedis, writer, limits, cache } = opts;
  return async (call) => {
    const args = DELETE_TOKEN.argv(signedRequestKeys(call.userId, call.tokenId), {
      ...signedRequestArgs(call, limits),
      liveMember: liveMemberOf(call.tokenId),
      tokenId: call.tokenId,
      legacyLiveMemberBytes: String(LEGACY_LIVE_MEMBER_BYTES),
    });
    const { reply, confirmed } = await forgettingAfter(
      () => cache?.forget(redisKeysOf(call.userId).token(call.tokenId)),
      () =>
        runRedis("token.delete", () =>
          writer.revoke(
            (client) => client.perpsDeleteToken(...args),
            (pipeline) => pipeline.perpsDeleteToken(...args),
          ),
        ),
    );
    const [status, retryAfterMs] = reply;
    // A token not found may be one an earlier delete removed without a
    // replica's confirmation (that delete answered 503, and this is its
    // retry): the script remembered this message, so its WAIT covers that
    // delete too, and only a confirmed absence is answered as one.
    if ((status === Status.DONE || status === Status.NOT_FOUND) && !confirmed) {
      throw new StoreError("unconfirmed-write");
    }
    switch (status) {
      case Status.DONE:
        return { kind: "deleted" };
      case Status.NOT_FOUND:
        return { kind: "not-found" };
      default:
        return refusal(status, retryAfterMs);
    }
  };
}
