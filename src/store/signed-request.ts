// What create and delete share, the TypeScript side of lua/signed-request.lua:
// the keys and arguments of a signed request, and the refusals both may answer.

import { redisKeysOf } from "./keys.js";
import { TokenScriptStatus as Status } from "./token-scripts.js";

/** What every signed request carries to the store. */
export interface SignedRequest {
  /** Lowercase user id. */
  userId: string;
  /** The public key whose signature was verified; it must still be registered. */
  signerPublicKey: string;
  /** SHA-256 of the signed message (32 raw bytes), remembered to refuse replays, whatever the outcome. */
  messageDigest: Buffer;
}

/** Refusals shared by create and delete. */
export type RequestRefusal =
  | { kind: "key-revoked" }
  | { kind: "replayed" }
  | { kind: "rate-limited"; retryAfterMs: number };

/** The limits every signed request is held to, as the scripts take them (decimal text). */
export interface SignedRequestLimits {
  /** How long a signed message is remembered, in ms. */
  replayWindowMs: string;
  /** Create and delete calls per user per rate period (the bucket's capacity). */
  rateCapacity: string;
  /** The rate bucket's period, in ms. */
  ratePeriodMs: string;
}

/** The user's keys a signed request touches (`SIGNED_REQUEST_KEYS` of token-scripts.ts); `token` is the request's. */
export function signedRequestKeys(userId: string, tokenId: string) {
  const redisKeys = redisKeysOf(userId);
  return {
    publicKeys: redisKeys.publicKeys,
    token: redisKeys.token(tokenId),
    names: redisKeys.names,
    live: redisKeys.live,
    replay: redisKeys.replay,
    rate: redisKeys.rate,
    nameIds: redisKeys.nameIds,
  };
}

/** What a signed request brings and the limits it is held to (`SIGNED_REQUEST_ARGS` of token-scripts.ts). */
export function signedRequestArgs(call: SignedRequest, limits: SignedRequestLimits) {
  return {
    signerPublicKey: call.signerPublicKey,
    messageDigest: call.messageDigest,
    replayWindowMs: limits.replayWindowMs,
    rateCapacity: limits.rateCapacity,
    ratePeriodMs: limits.ratePeriodMs,
  };
}

/** The refusal a create or delete script answered; throws for any other status. */
export function refusal(status: Status, retryAfterMs: number): RequestRefusal {
  switch (status) {
    case Status.KEY_REVOKED:
      return { kind: "key-revoked" };
    case Status.REPLAYED:
      return { kind: "replayed" };
    case Status.RATE_LIMITED:
      return { kind: "rate-limited", retryAfterMs };
    default:
      throw new Error(`unexpected token script status ${status}`);
  }
}
