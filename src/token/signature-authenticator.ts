// Which registered key of the user signed a create or delete
// (createSignatureAuthenticator): the keys remembered from earlier calls are
// tried first (createPublicKeyCache, a hint that needs no invalidation), then
// those read from Redis.

import { generateKeyPairSync, hash } from "node:crypto";
import { type BoundedCache, createBoundedCache } from "../cache/bounded-cache.js";
import type { Ed25519Verifier } from "../crypto/ed25519-verifier.js";
import type { SignedRequest } from "../store/signed-request.js";
import type { TokenStore } from "../store/token-store.js";
import { invalidSignature } from "./token-errors.js";
import { canonicalUserId } from "./user-id.js";

/**
 * Who signed a create or delete: the registered key of the user under which
 * its signature verifies, looked for among the keys remembered from earlier
 * calls first (no round trip), then among those read from Redis.
 */
export interface SignatureAuthenticator {
  /** The request's identity; `Invalid signature` when no key of the user made it. */
  signedRequest(
    signedUserId: string,
    message: Uint8Array,
    signature: Uint8Array,
  ): Promise<SignedRequest>;
  /** The store found a signing key revoked: the keys remembered for the user are stale. */
  forgetKeys(userId: string): void;
}

export interface SignatureAuthenticatorOptions {
  store: Pick<TokenStore, "publicKeys">;
  verifier: Ed25519Verifier;
  /** Users whose registered keys are remembered between calls (see PublicKeyCache). */
  publicKeyCacheUsers: number;
}

/** A valid Ed25519 public key (hex) whose secret is dropped at once: it verifies no signature. */
function newDecoyPublicKey(): string {
  const spki = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" });
  // The raw key is the last 32 bytes of the DER SubjectPublicKeyInfo.
  return spki.subarray(spki.length - 32).toString("hex");
}

export function createSignatureAuthenticator(
  opts: SignatureAuthenticatorOptions,
): SignatureAuthenticator {
  const { store, verifier } = opts;
  const publicKeyCache = createPublicKeyCache(opts.publicKeyCacheUsers);
  const decoyPublicKey = newDecoyPublicKey();

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

  return {
    async signedRequest(signedUserId, message, signature) {
      const userId = canonicalUserId(signedUserId);
      const signerPublicKey = await signerPublicKeyOf(userId, message, signature);
      if (signerPublicKey === undefined) {
        throw invalidSignature();
      }
      // Replays are recognised by the message, not the signature bytes, which
      // can have more than one accepted encoding.
      const messageDigest = hash("sha256", message, "buffer");
      return { userId, signerPublicKey, messageDigest };
    },
    forgetKeys: (userId) => publicKeyCache.delete(userId),
  };
}

/**
 * The users' registered public keys as last read from Redis, so that a
 * create or delete usually needs one Redis round trip (the atomic script)
 * instead of two.
 *
 * Only a hint, correct without any invalidation message:
 * - a key deleted since it was cached still verifies here, but the store's
 *   script re-checks that the signing key is registered (`key-revoked`), so
 *   the call is refused exactly as before; the entry is then dropped;
 * - a key registered since is missing here, so its signature verifies under
 *   none of the cached keys, and the caller re-reads the keys from Redis.
 */
export type PublicKeyCache = BoundedCache<string, readonly string[]>;

/** At most `maxUsers` users (oldest first out), so memory stays bounded. */
export function createPublicKeyCache(maxUsers: number): PublicKeyCache {
  return createBoundedCache(maxUsers);
}
