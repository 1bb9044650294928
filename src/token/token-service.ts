// What TokenService answers depends on the store's Redis scripts (replays, rates,
// names, revoked keys), so its tests call a running service over a private Redis.
// Tested by test/integration/token-service.test.ts, test/integration/token-service-shape.test.ts, test/integration/token-service-signatures.test.ts.

import { generateKeyPairSync, hash } from "node:crypto";
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
import type { RequestRefusal, SignedRequest } from "../store/signed-request.js";
import type { TokenStore } from "../store/token-store.js";
import { type BearerAuthenticator, createBearerAuthenticator } from "./bearer-authenticator.js";
import { expiresAtMs, utcDate } from "./expiry-date.js";
import { createListTokensHandler } from "./list-tokens.js";
import { createPublicKeyCache } from "./public-key-cache.js";
import { checkCreateRequest, checkDeleteRequest, checkTimeWindow } from "./request-rules.js";
import {
  alreadyCreated,
  invalidSignature,
  nameTaken,
  refusalError,
  tokenNotFound,
  tooManyTokens,
} from "./token-errors.js";
import { canonicalUserId } from "./user-id.js";

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

/** A valid Ed25519 public key (hex) whose secret is dropped at once: it verifies no signature. */
function newDecoyPublicKey(): string {
  const spki = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" });
  // The raw key is the last 32 bytes of the DER SubjectPublicKeyInfo.
  return spki.subarray(spki.length - 32).toString("hex");
}

/**
 * TokenService: checks each request in the contract's order (shape, time
 * window, signature, then replay, rate and business rules in the store) and
 * stores tokens through the store; lists a user's named tokens for a bearer
 * token of the user (list-tokens.ts).
 */
export function createTokenService(opts: TokenServiceOptions): ServiceImpl<typeof TokenService> {
  const { store, verifier, observe } = opts;
  const now = opts.now ?? Date.now;
  const publicKeyCache = createPublicKeyCache(opts.publicKeyCacheUsers ?? 10_000);
  const decoyPublicKey = newDecoyPublicKey();
  const listTokens = createListTokensHandler({
    store,
    authenticator: opts.authenticator ?? createBearerAuthenticator({ store, now }),
  });

  /**
   * The public key that made `signature`: first among the cached ones (no
   * round trip), else among those read from Redis that were not tried yet.
   */
  async function signerPublicKeyOf(
    userId: string,
    message: Uint8Array,
    signature: Uint8Array,
  ): Promise<string | undefined> {
    const cached = publicKeyCache.get(userId);
    const hit = firstSigner(cached ?? [], message, signature);
    if (hit !== undefined) {
      return hit;
    }
    const publicKeys = await store.publicKeys(userId);
    // Users without keys are not remembered, so unknown ids cannot fill the cache.
    if (publicKeys.length > 0) {
      publicKeyCache.set(userId, publicKeys);
    } else {
      publicKeyCache.delete(userId);
    }
    const untried = publicKeys.filter((k) => cached?.includes(k) !== true);
    if (untried.length === 0 && (cached?.length ?? 0) === 0) {
      // No key at all: verify once anyway, so that an unknown user costs what
      // a known user with a wrong signature costs (one read, one verify) and
      // timing does not tell which users have keys. Nobody holds decoyPublicKey's secret.
      verifier.verify(decoyPublicKey, message, signature);
      return undefined;
    }
    return firstSigner(untried, message, signature);
  }

  /**
   * The first of `publicKeys` under which `signature` verifies. One at a time: a
   * user has one key as a rule, and a wrong signature should cost no more
   * verifications than needed.
   */
  function firstSigner(
    publicKeys: readonly string[],
    message: Uint8Array,
    signature: Uint8Array,
  ): string | undefined {
    for (const publicKey of publicKeys) {
      if (verifier.verify(publicKey, message, signature)) {
        return publicKey;
      }
    }
    return undefined;
  }

  /** A refusal of the store; a revoked key means the cached keys are stale. */
  function refused(userId: string, outcome: RequestRefusal): never {
    if (outcome.kind === "key-revoked") {
      publicKeyCache.delete(userId);
    }
    throw refusalError(outcome);
  }

  /** Finds the registered key that made `signature` over `message`; the call's identity. */
  async function verifiedRequest(
    signedUserId: string,
    message: Uint8Array,
    signature: Uint8Array,
  ): Promise<SignedRequest> {
    const userId = canonicalUserId(signedUserId);
    const signerPublicKey = await signerPublicKeyOf(userId, message, signature);
    if (signerPublicKey === undefined) {
      throw invalidSignature();
    }
    // Replays are recognised by the message, not the signature bytes, which
    // can have more than one accepted encoding.
    const messageDigest = hash("sha256", message, "buffer");
    return { userId, signerPublicKey, messageDigest };
  }

  return {
    async createToken(req) {
      const checked = checkCreateRequest(req, { maxLifetimeSeconds: opts.maxLifetimeSeconds });
      const nowMs = now();
      checkTimeWindow(checked.timestamp, nowMs);
      const call = await verifiedRequest(
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
      const call = await verifiedRequest(
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
