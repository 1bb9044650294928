import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Ed25519Verifier } from "../crypto/ed25519-verifier.js";
import {
  CreateTokenResponseSchema,
  DeleteTokenResponseSchema,
  type TokenService,
} from "../gen/perps/token/v1/token_pb.js";
import { expiresAtMs, utcDate } from "./expiry-date.js";
import { checkCreateRequest, checkDeleteRequest, checkTimeWindow } from "./request-rules.js";
import { createTokenMessage, deleteTokenMessage } from "./signed-message.js";
import {
  invalidSignature,
  nameTaken,
  refusalError,
  tokenNotFound,
  tooManyTokens,
} from "./token-errors.js";
import { generateToken, generateTokenId, hashToken } from "./token-secret.js";
import type { SignedCall, TokenStore } from "./token-store.js";
import { userKeyOf } from "./user-id.js";

export interface TokenServiceOptions {
  store: TokenStore;
  verifier: Ed25519Verifier;
  /** Longest lifetime a token may be created with, in seconds. */
  maxLifetimeSeconds: number;
  /** Server time in Unix milliseconds. Default `Date.now`. */
  now?: () => number;
}

/**
 * TokenService: checks each request in the contract's order (shape, time
 * window, signature, then replay, rate and business rules in the store) and
 * stores tokens through the store.
 */
export function createTokenService(opts: TokenServiceOptions): ServiceImpl<typeof TokenService> {
  const { store, verifier } = opts;
  const now = opts.now ?? Date.now;

  /** Finds the registered key that made `signature` over `message`; the call's identity. */
  async function verifiedCall(
    userId: string,
    message: Uint8Array,
    signature: Uint8Array,
  ): Promise<SignedCall> {
    const userKey = userKeyOf(userId);
    const keys = await store.userKeys(userKey);
    const signingKey = keys.find((k) => verifier.verify(k, message, signature));
    if (signingKey === undefined) {
      throw invalidSignature();
    }
    // Replays are recognised by the message, not the signature bytes, which
    // can have more than one accepted encoding.
    const messageHash = createHash("sha256").update(message).digest("hex");
    return { userKey, signingKey, messageHash };
  }

  return {
    async createToken(req) {
      const checked = checkCreateRequest(req, { maxLifetimeSeconds: opts.maxLifetimeSeconds });
      const nowMs = now();
      checkTimeWindow(checked.timestamp, nowMs);
      const call = await verifiedCall(
        checked.userId,
        createTokenMessage(checked),
        checked.signature,
      );

      const token = generateToken();
      const id = generateTokenId();
      const expiresAt = expiresAtMs(nowMs, checked.lifetimeSeconds);
      const outcome = await store.create({
        ...call,
        tokenId: id,
        tokenHash: hashToken(token),
        name: checked.name,
        expiresAtMs: expiresAt,
      });
      switch (outcome.kind) {
        case "created":
          return create(CreateTokenResponseSchema, { expiresAt: utcDate(expiresAt), id, token });
        case "name-taken":
          throw nameTaken();
        case "too-many-tokens":
          throw tooManyTokens(outcome.retryAfterMs, store.maxActivePerUser);
        default:
          throw refusalError(outcome);
      }
    },

    async deleteToken(req) {
      const checked = checkDeleteRequest(req);
      checkTimeWindow(checked.timestamp, now());
      const call = await verifiedCall(
        checked.userId,
        deleteTokenMessage(checked),
        checked.signature,
      );
      const outcome = await store.delete({ ...call, tokenId: checked.tokenId });
      switch (outcome.kind) {
        case "deleted":
          return create(DeleteTokenResponseSchema);
        case "not-found":
          throw tokenNotFound();
        default:
          throw refusalError(outcome);
      }
    },
  };
}
