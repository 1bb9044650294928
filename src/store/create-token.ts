/**
 * Where a token is created: one script (lua/create-token.lua) that checks
 * the signed request and the user's limits and stores the record, atomic with
 * every check, and its rollback (lua/rollback-create.lua) when replicas did
 * not confirm it or its reply was lost, which undoes that attempt's writes
 * and never a retry's.
 *
 * Tested by test/integration/token-store.test.ts, test/integration/create-rollback.test.ts, test/integration/replica-wait.test.ts, test/integration/create-retries.test.ts, test/integration/create-retries-failover.test.ts.
 */

import type { DurableWriter } from "./durable-writer.js";
import { liveMemberOf, redisKeysOf } from "./keys.js";
import type { ScriptArg } from "./lua-script.js";
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
import { encodeTokenRecord, type TokenRecordExtras } from "./token-record.js";
import { TokenScriptStatus as Status } from "./token-script-status.js";
import { CREATE_TOKEN, ROLLBACK_CREATE } from "./token-scripts.js";

/**
 * A token to store. Besides the name and the expiry, it may carry any field
 * of the stored record (TokenRecord, token-record.ts); each one left out is
 * stored as its default.
 */
export interface NewToken extends SignedRequest, Partial<TokenRecordExtras> {
  /** `tokenIdOf(messageDigest)`: a replay of the message finds the token by it. */
  tokenId: string;
  /** `tokenDigest()` of the bearer token; the token itself is never stored. */
  tokenDigest: Buffer;
  /** Undefined for a session token. */
  name: string | undefined;
  expiresAtMs: number;
}

export type CreateTokenOutcome =
  | { kind: "created" }
  /** This very message created `tokenId` earlier, and that token is live. */
  | { kind: "already-created" }
  | { kind: "name-taken" }
  | { kind: "too-many-tokens"; retryAfterMs: number }
  | RequestRefusal;

/** Stores a token (TokenStore's `create`). */
export type TokenCreator = (token: NewToken) => Promise<CreateTokenOutcome>;

export interface TokenCreatorOptions {
  runRedis: RedisRunner;
  writer: DurableWriter;
  limits: SignedRequestLimits;
  /** Most live tokens per user, session tokens included (decimal text). */
  maxActive: string;
}

/** The record this create stores: this attempt's own, as its bearer token is (its digest). */
function recordOf(token: NewToken): Buffer {
  const {
    userId: _user,
    signerPublicKey: _signer,
    messageDigest: _message,
    tokenId: _id,
    tokenDigest: digest,
    name,
    expiresAtMs,
    ...extras
  } = token;
  return encodeTokenRecord({ digest, name: name ?? "", expiresAtMs, extras });
}

/** The create script's keys and arguments: the signed request, the record and the user's limit. */
function createArgs(
  token: NewToken,
  record: Buffer,
  liveMember: Buffer,
  limits: SignedRequestLimits,
  maxActive: string,
): ScriptArg[] {
  return CREATE_TOKEN.argv(signedRequestKeys(token.userId, token.tokenId), {
    ...signedRequestArgs(token, limits),
    record,
    liveMember,
    named: token.name === undefined ? "0" : "1",
    name: token.name ?? "",
    expiresAtMs: String(token.expiresAtMs),
    maxActive,
    tokenId: token.tokenId,
  });
}

/**
 * The rollback's keys and arguments: what the create wrote, found again by
 * name, and its record, by which the script tells this attempt's writes from
 * those of another attempt of the same signed request (same keys, another
 * bearer token).
 */
function rollbackArgs(token: NewToken, record: Buffer, liveMember: Buffer): ScriptArg[] {
  const redisKeys = redisKeysOf(token.userId);
  return ROLLBACK_CREATE.argv(
    {
      token: redisKeys.token(token.tokenId),
      names: redisKeys.names,
      live: redisKeys.live,
      replay: redisKeys.replay,
      nameIds: redisKeys.nameIds,
    },
    {
      record,
      name: token.name ?? "",
      liveMember,
      messageDigest: token.messageDigest,
      tokenId: token.tokenId,
    },
  );
}

/** What the create script's confirmed answer means. */
function createOutcome(status: Status, retryAfterMs: number): CreateTokenOutcome {
  switch (status) {
    case Status.DONE:
      return { kind: "created" };
    case Status.NAME_TAKEN:
      return { kind: "name-taken" };
    case Status.TOO_MANY_TOKENS:
      return { kind: "too-many-tokens", retryAfterMs };
    case Status.ALREADY_CREATED:
      return { kind: "already-created" };
    default:
      return refusal(status, retryAfterMs);
  }
}

export function createTokenCreator(opts: TokenCreatorOptions): TokenCreator {
  const { runRedis, writer, limits, maxActive } = opts;
  return async (token) => {
    const liveMember = liveMemberOf(token.tokenId);
    const record = recordOf(token);
    const args = createArgs(token, record, liveMember, limits, maxActive);
    const undoArgs = rollbackArgs(token, record, liveMember);
    // Nobody receives the value of a token whose create was not confirmed or
    // whose reply was lost: it is rolled back (on the same connection, so after
    // the create should that still run), and a retry finds its name free. The
    // rollback may still be retried after this answers, once a retry of the
    // request has stored its own record: it undoes only this attempt's.
    const { reply, confirmed } = await runRedis("token.create", () =>
      writer.write(
        (client) => client.perpsCreateToken(...args),
        (pipeline) => pipeline.perpsCreateToken(...args),
        {
          needed: ([status]) => status === Status.DONE,
          run: (client) => client.perpsRollbackCreate(...undoArgs),
        },
      ),
    );
    const [status, retryAfterMs] = reply;
    if (status === Status.DONE && !confirmed) {
      throw new StoreError("unconfirmed-write");
    }
    return createOutcome(status, retryAfterMs);
  };
}
