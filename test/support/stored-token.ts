import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { generateToken, tokenDigest, tokenIdOf } from "@perps/token-client/protocol";
import type { TokenStore } from "../../src/store/token-store.js";

/**
 * Creates a token of `userId` through the real store (its key already
 * registered as `signerPublicKey`), as a verified create would; fails the test
 * unless it is created.
 */
export async function storedToken(
  store: TokenStore,
  token: { userId: string; signerPublicKey: string; name: string | undefined; expiresAtMs: number },
): Promise<{ token: string; tokenId: string }> {
  const messageDigest = randomBytes(32);
  const tokenId = tokenIdOf(messageDigest);
  const bearer = generateToken(token.userId, tokenId);
  const outcome = await store.create({
    ...token,
    messageDigest,
    tokenId,
    tokenDigest: tokenDigest(bearer),
  });
  assert.deepEqual(outcome, { kind: "created" });
  return { token: bearer, tokenId };
}
