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
import type { CallRefusal, SignedCall, TokenStore } from "../store/token-store.js";
import { type BearerAuthenticator, createBearerAuthenticator } from "./bearer-authenticator.js";
import { expiresAtMs, utcDate } from "./expiry-date.js";
import { createListTokensHandler } from "./list-tokens.js";
import { checkCreateRequest, checkDeleteRequest, checkTimeWindow } from "./request-rules.js";
import {
  alreadyCreated,
  invalidSignature,
  nameTaken,
  refusalError,
  tokenNotFound,
  tooManyTokens,
} from "./token-errors.js";
import { userKeyOf } from "./user-id.js";
import { createUserKeyCache } from "./user-key-cache.js";

export interface TokenServiceOptions {
  store: TokenStore;
  verifier: Ed25519Verifier;
  /** Longest lifetime a token may be created with, in seconds. */
  maxLifetimeSeconds: number;
  /** Server time in Unix milliseconds. Default `Date.now`. */
  now?: () => number;
  /** Users whose registered keys are remembered between calls (see UserKeyCache). Default 10000. */
  keyCacheUsers?: number;
  /** Checks the bearer token of ListTokens. Default: `createBearerAuthenticator` over `store`, with `now`. */
  authenticator?: BearerAuthenticator;
  /** Told of each token created or deleted (the metrics count them). Default: nobody. */
  observe?: (event: "created" | "deleted") => void;
}

/** A valid Ed25519 public key (hex) whose secret is dropped at once: it verifies no signature. */
function newDecoyKey(): string {
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
  const keyCache = createUserKeyCache(opts.keyCacheUsers ?? 10_000);
  const decoyKey = newDecoyKey();
  const listTokens = createListTokensHandler({
    store,
    authenticator: opts.authenticator ?? createBearerAuthenticator({ store, now }),
  });

  /**
   * The key that made `signature`: first among the cached keys (no round
   * trip), else among the keys read from Redis that were not tried yet.
   */
  async function signingKeyOf(
    userKey: string,
    message: Uint8Array,
    signature: Uint8Array,
  ): Promise<string | undefined> {
    const cached = keyCache.get(userKey);
    const hit = firstSigner(cached ?? [], message, signature);
    if (hit !== undefined) {
      return hit;
    }
    const keys = await store.userKeys(userKey);
    // Users without keys are not remembered, so unknown ids cannot fill the cache.
    if (keys.length > 0) {
      keyCache.set(userKey, keys);
    } else {
      keyCache.delete(userKey);
    }
    const untried = keys.filter((k) => cached?.includes(k) !== true);
    if (untried.length === 0 && (cached?.length ?? 0) === 0) {
      // No key at all: verify once anyway, so that an unknown user costs what
      // a known user with a wrong signature costs (one read, one verify) and
      // timing does not tell which users have keys. Nobody holds decoyKey's secret.
      verifier.verify(decoyKey, message, signature);
      return undefined;
    }
    return firstSigner(untried, message, signature);
  }

  /**
   * The first of `keys` under which `signature` verifies. One at a time: a
   * user has one key as a rule, and a wrong signature should cost no more
   * verifications than needed.
   */
  function firstSigner(
    keys: readonly string[],
    message: Uint8Array,
    signature: Uint8Array,
  ): string | undefined {
    for (const key of keys) {
      if (verifier.verify(key, message, signature)) {
        return key;
      }
    }
    return undefined;
  }

  /** A refusal of the store; a revoked key means the cached keys are stale. */
  function refused(userKey: string, outcome: CallRefusal): never {
    if (outcome.kind === "key-revoked") {
      keyCache.delete(userKey);
    }
    throw refusalError(outcome);
  }

  /** Finds the registered key that made `signature` over `message`; the call's identity. */
  async function verifiedCall(
    userId: string,
    message: Uint8Array,
    signature: Uint8Array,
  ): Promise<SignedCall> {
    const userKey = userKeyOf(userId);
    const signingKey = await signingKeyOf(userKey, message, signature);
    if (signingKey === undefined) {
      throw invalidSignature();
    }
    // Replays are recognised by the message, not the signature bytes, which
    // can have more than one accepted encoding.
    const messageDigest = hash("sha256", message, "buffer");
    return { userKey, signingKey, messageDigest };
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

      const id = tokenIdOf(call.messageDigest);
      const token = generateToken(call.userKey, id);
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
          return refused(call.userKey, outcome);
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
          observe?.("deleted");
          return create(DeleteTokenResponseSchema);
        case "not-found":
          throw tokenNotFound();
        default:
          return refused(call.userKey, outcome);
      }
    },

    listTokens: (_req, ctx) => listTokens(ctx),
  };
}
