// What TokenService answers depends on the store's Redis scripts (replays, rates,
// names, revoked keys), so its tests call a running service over a private Redis.
// Tested by test/integration/token-service.test.ts, test/integration/token-service-shape.test.ts, test/integration/token-service-signatures.test.ts.

import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  CreateTokenResponseSchema,
  DeleteTokenResponseSchema,
  type TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  createTokenMessage,
  deleteTokenMessage,
  generateToken,
  tokenDigest,
  tokenIdOf,
} from "@perps/token-client/protocol";
import type { Ed25519Verifier } from "../crypto/ed25519-verifier.js";
import type { RequestRefusal } from "../store/signed-request.js";
import type { TokenStore } from "../store/token-store.js";
import { type BearerAuthenticator, createBearerAuthenticator } from "./bearer-authenticator.js";
import { expiresAtMs, utcDate } from "./expiry-date.js";
import { createListTokensHandler } from "./list-tokens.js";
import { checkCreateRequest, checkDeleteRequest, checkTimeWindow } from "./request-rules.js";
import { createSignatureAuthenticator } from "./signature-authenticator.js";
import {
  alreadyCreated,
  nameTaken,
  refusalError,
  tokenNotFound,
  tooManyTokens,
} from "./token-errors.js";

export interface TokenServiceOptions {
  store: TokenStore;
  verifier: Ed25519Verifier;
  /** Longest lifetime a token may be created with, in seconds. */
  maxLifetimeSeconds: number;
  /** Server time in Unix milliseconds. Default `Date.now`. */
  now?: () => number;
  /** Users whose registered keys are remembered between calls (see PublicKeyCache). Default 10000. */
  publicKeyCacheUsers?: number;
  /** Checks the bearer token of ListTokens. Default: `createBearerAuthenticator` over `store`, with `now`. */
  authenticator?: BearerAuthenticator;
  /** Told of each token created or deleted (the metrics count them). Default: nobody. */
  observe?: (event: "created" | "deleted") => void;
}

/**
 * TokenService: checks each request in the contract's order (shape, time
 * window, signature, then replay, rate and business rules in the store) and
 * stores tokens through the store; lists a user's named tokens for a bearer
 * token of the user (list-tokens.ts).
 */
export function createTokenService(opts: TokenServiceOptions): ServiceImpl<typeof TokenService> {
  const { store, observe } = opts;
  const now = opts.now ?? Date.now;
  const signatures = createSignatureAuthenticator({
    store,
    verifier: opts.verifier,
    publicKeyCacheUsers: opts.publicKeyCacheUsers ?? 10_000,
  });
  const listTokens = createListTokensHandler({
    store,
    authenticator: opts.authenticator ?? createBearerAuthenticator({ store, now }),
  });

  /** A refusal of the store; a revoked key means the cached keys are stale. */
  function refused(userId: string, outcome: RequestRefusal): never {
    if (outcome.kind === "key-revoked") {
      signatures.forgetKeys(userId);
    }
    throw refusalError(outcome);
  }

  return {
    async createToken(req) {
      const checked = checkCreateRequest(req, { maxLifetimeSeconds: opts.maxLifetimeSeconds });
      const nowMs = now();
      checkTimeWindow(checked.timestamp, nowMs);
      const call = await signatures.signedRequest(
        checked.userId,
        createTokenMessage(checked),
        checked.signature,
      );

      const id = tokenIdOf(call.messageDigest);
      const token = generateToken(call.userId, id);
      const expiresAt = expiresAtMs(nowMs, checked.lifetimeSeconds);
      const outcome = await store.create({
        ...call,
        tokenId: id,
        tokenDigest: tokenDigest(token),
        name: checked.name,
        expiresAtMs: expiresAt,
      });
      switch (outcome.kind) {
        case "created":
          observe?.("created");
          return create(CreateTokenResponseSchema, { expiresAt: utcDate(expiresAt), id, token });
        case "already-created":
          throw alreadyCreated(id);
        case "name-taken":
          throw nameTaken();
        case "too-many-tokens":
          throw tooManyTokens(outcome.retryAfterMs, store.maxActivePerUser);
        default:
          return refused(call.userId, outcome);
      }
    },

    async deleteToken(req) {
      const checked = checkDeleteRequest(req);
      checkTimeWindow(checked.timestamp, now());
      const call = await signatures.signedRequest(
        checked.userId,
        deleteTokenMessage(checked),
        checked.signature,
      );
      const outcome = await store.delete({ ...call, tokenId: checked.tokenId });
      switch (outcome.kind) {
        case "deleted":
          observe?.("deleted");
          return create(DeleteTokenResponseSchema);
        case "not-found":
          throw tokenNotFound();
        default:
          return refused(call.userId, outcome);
      }
    },

    listTokens: (req, ctx) => listTokens(req, ctx),
  };
}
