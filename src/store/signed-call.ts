// What create and delete share, the TypeScript side of lua/signed-call.lua:
// the keys and arguments of a signed call, and the refusals both may answer.

import { redisKeysOf } from "./keys.js";
import { TokenScriptStatus as Status } from "./token-script-status.js";

/** What every signed call carries to the store. */
export interface SignedCall {
  /** Lowercase user id. */
  userId: string;
  /** The public key whose signature was verified; it must still be registered. */
  signerPublicKey: string;
  /** SHA-256 of the signed message (32 raw bytes), remembered to refuse replays, whatever the outcome. */
  messageDigest: Buffer;
}

/** Refusals shared by create and delete. */
export type CallRefusal =
  | { kind: "key-revoked" }
  | { kind: "replayed" }
  | { kind: "rate-limited"; retryAfterMs: number };

/** The limits every signed call is held to, as the scripts take them (decimal text). */
export interface SignedCallLimits {
  /** How long a signed message is remembered, in ms. */
  replayWindowMs: string;
  /** Create and delete calls per user per rate period (the bucket's capacity). */
  rateCapacity: string;
  /** The rate bucket's period, in ms. */
  ratePeriodMs: string;
}

/** The user's keys a signed call touches (`SIGNED_CALL_KEYS` of token-scripts.ts); `token` is the call's. */
export function signedCallKeys(userId: string, tokenId: string) {
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

/** What a signed call brings and the limits it is held to (`SIGNED_CALL_ARGS` of token-scripts.ts). */
export function signedCallArgs(call: SignedCall, limits: SignedCallLimits) {
  return {
    signerPublicKey: call.signerPublicKey,
    messageDigest: call.messageDigest,
    replayWindowMs: limits.replayWindowMs,
    rateCapacity: limits.rateCapacity,
    ratePeriodMs: limits.ratePeriodMs,
  };
}

/** The refusal a create or delete script answered; throws for any other status. */
export function refusal(status: Status, retryAfterMs: number): CallRefusal {
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
