import { randomBytes } from "node:crypto";
import { generateToken, tokenDigest, tokenIdOf } from "@perps/token-client/protocol";
import type { TokenStore } from "../src/store/token-store.js";
import type { BenchUser } from "./bench-users.js";
import type { LiveToken } from "./signed-requests.js";

export interface SeedOptions {
  store: TokenStore;
  users: readonly BenchUser[];
  count: number;
  /** Named tokens get the name `seed-<i>`; session tokens have none. */
  named: boolean;
  /** Lifetime in ms. */
  lifetimeMs: number;
}

/** A seeded token: what a delete needs, and the bearer token itself for the check phases. */
export interface SeededToken extends LiveToken {
  readonly token: string;
}

/**
 * Writes tokens through the real store code (the same Lua script the
 * service runs), users taking turns, 500 calls in flight (ioredis pipelines
 * them). No signature is involved: the store trusts its caller for that.
 */
export async function seedTokens(opts: SeedOptions): Promise<SeededToken[]> {
  const tokens: SeededToken[] = [];
  const expiresAtMs = Date.now() + opts.lifetimeMs;
  for (let start = 0; start < opts.count; start += 500) {
    const batch = Array.from({ length: Math.min(500, opts.count - start) }, (_, j) => start + j);
    await Promise.all(
      batch.map(async (i) => {
        const user = opts.users[i % opts.users.length];
        if (user === undefined) {
          throw new Error("no users to seed tokens for");
        }
        // A random stand-in for a signed message's digest, and its id as the service derives it.
        const messageDigest = randomBytes(32);
        const tokenId = tokenIdOf(messageDigest);
        const token = generateToken(user.userId, tokenId);
        const outcome = await opts.store.create({
          userId: user.userId,
          signerPublicKey: user.publicKeyHex,
          messageDigest,
          tokenId,
          tokenDigest: tokenDigest(token),
          name: opts.named ? `seed-${i}` : undefined,
          expiresAtMs,
        });
        if (outcome.kind !== "created") {
          throw new Error(`seeding a token failed: ${outcome.kind}`);
        }
        tokens.push({ user, tokenId, token });
      }),
    );
  }
  return tokens;
}
