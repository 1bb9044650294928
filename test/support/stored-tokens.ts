import { randomBytes, randomUUID } from "node:crypto";
import { generateToken, tokenDigest, tokenIdOf } from "@perps/token-client/protocol";
import type { Redis } from "ioredis";
import { redisKeysOf } from "../../src/store/keys.js";
import type { NewToken } from "../../src/store/token-store.js";

/** The signing key the store tests register: any 64 hex characters, never verified by the store. */
export const SIGNER_PUBLIC_KEY = "ab".repeat(32);

/**
 * A new user whose signing key is registered in `redis`, and a maker of its
 * tokens as the store is handed them (a fresh signed message each).
 */
export async function storeUser(
  redis: Redis,
): Promise<(name: string | undefined, expiresAtMs: number) => NewToken> {
  const userId = randomUUID();
  await redis.sadd(redisKeysOf(userId).publicKeys, SIGNER_PUBLIC_KEY);
  return (name, expiresAtMs) => {
    const messageDigest = randomBytes(32);
    const tokenId = tokenIdOf(messageDigest);
    return {
      userId,
      signerPublicKey: SIGNER_PUBLIC_KEY,
      messageDigest,
      tokenId,
      tokenDigest: tokenDigest(generateToken(userId, tokenId)),
      name,
      expiresAtMs,
    };
  };
}
