import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { Ed25519Verifier } from "../crypto/ed25519-verifier.js";
import {
  CreateTokenResponseSchema,
  DeleteTokenResponseSchema,
  type TokenService,
} from "../gen/perps/token/v1/token_pb.js";
import { expiresAtMs, utcDate } from "./expiry-date.js";
import { checkCreateRequest, checkDeleteRequest, checkTimeWindow } from "./request-rules.js";
import { createTokenMessage, deleteTokenMessage } from "./signed-message.js";
import { generateToken, generateTokenId, hashToken } from "./token-secret.js";
import type { TokenStore } from "./token-store.js";
import { userKeyOf } from "./user-id.js";

export interface TokenServiceOptions {
  store: TokenStore;
  verifier: Ed25519Verifier;
  /** Longest lifetime a token may be created with, in seconds. */
  maxLifetimeSeconds: number;
  /** Server time in Unix milliseconds. Default `Date.now`. */
  now?: () => number;
}

// One answer for an unknown user, a user without keys and a wrong signature,
// so that the service does not reveal which users exist.
const invalidSignature = () => new ConnectError("Invalid signature", Code.Unauthenticated);

/**
 * TokenService: checks each request in the contract's order (shape, time
 * window, signature, business rules) and stores tokens through the store.
 */
export function createTokenService(opts: TokenServiceOptions): ServiceImpl<typeof TokenService> {
  const { store, verifier } = opts;
  const now = opts.now ?? Date.now;

  /** The registered key that made `signature` over `message`, if any. */
  async function signingKey(userKey: string, message: Uint8Array, signature: Uint8Array) {
    const keys = await store.userKeys(userKey);
    const key = keys.find((k) => verifier.verify(k, message, signature));
    if (key === undefined) {
      throw invalidSignature();
    }
    return key;
  }

  return {
    async createToken(req) {
      const checked = checkCreateRequest(req, { maxLifetimeSeconds: opts.maxLifetimeSeconds });
      const nowMs = now();
      checkTimeWindow(checked.timestamp, nowMs);
      const userKey = userKeyOf(checked.userId);
      const key = await signingKey(userKey, createTokenMessage(checked), checked.signature);

      const token = generateToken();
      const id = generateTokenId();
      const expiresAt = expiresAtMs(nowMs, checked.lifetimeSeconds);
      const outcome = await store.create({
        userKey,
        tokenId: id,
        tokenHash: hashToken(token),
        name: checked.name,
        expiresAtMs: expiresAt,
        signingKey: key,
      });
      switch (outcome) {
        case "created":
          return create(CreateTokenResponseSchema, { expiresAt: utcDate(expiresAt), id, token });
        case "name-taken":
          throw new ConnectError(
            "name: a live token of this user already has this name",
            Code.AlreadyExists,
          );
        case "key-revoked":
          throw invalidSignature();
      }
    },

    async deleteToken(req) {
      const checked = checkDeleteRequest(req);
      checkTimeWindow(checked.timestamp, now());
      const userKey = userKeyOf(checked.userId);
      const key = await signingKey(userKey, deleteTokenMessage(checked), checked.signature);
      const outcome = await store.delete({ userKey, tokenId: checked.tokenId, signingKey: key });
      switch (outcome) {
        case "deleted":
          return create(DeleteTokenResponseSchema);
        case "not-found":
          throw new ConnectError("tokenId: no such token", Code.NotFound);
        case "key-revoked":
          throw invalidSignature();
      }
    },
  };
}
