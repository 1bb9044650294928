/**
 * Where a bearer token's record is found (the bearer check, the
 * introspection): from the token cache when it holds the record, else one GET
 * on the user's primary. The hottest path of the service: no allocation,
 * closure or await per call beyond the ones below.
 *
 * Tested by test/integration/token-store.test.ts, test/integration/token-cache.test.ts, test/unit/token/bearer-authenticator.test.ts.
 */

import type { RedisClient } from "../redis/redis-client.js";
import { redisKeysOf } from "./keys.js";
import type { RedisRunner } from "./redis-runner.js";
import { decodeTokenRecord } from "./token-record.js";
import type { TokenRecordCache, TrackedRead } from "./token-record-cache.js";
import { LOOKUP_TOKEN } from "./token-scripts.js";

/** A token's record as stored, for a bearer check. */
export interface StoredToken {
  /** `tokenDigest()` of the token: the stored {@link TOKEN_DIGEST_BYTES} raw bytes. */
  digest: Buffer;
  /** "" for a session token. */
  name: string;
  /** When Redis expires the record, in Unix ms. */
  expiresAtMs: number;
  /** With a cache: keeps the record in memory; call only once the presented token matched it. */
  keep?: () => void;
}

/** The record of the token `tokenId` of the user (TokenStore's `lookup`). */
export type TokenLookup = (userId: string, tokenId: string) => Promise<StoredToken | undefined>;

export interface TokenLookupOptions {
  /** The client with the token scripts defined on it (scripted-client.ts). */
  redis: () => RedisClient;
  runRedis: RedisRunner;
  /** Token records kept in memory, dropped on Redis' invalidations; undefined: every lookup reads Redis. */
  cache: TokenRecordCache | undefined;
}

export function createTokenLookup(opts: TokenLookupOptions): TokenLookup {
  const { redis, runRedis, cache } = opts;
  return async (userId, tokenId) => {
    const key = redisKeysOf(userId).token(tokenId);
    const cached = cache?.get(key);
    if (cached !== undefined) {
      return cached;
    }
    // One GET on the user's primary (reads never go to a lagging replica,
    // which may still hold a deleted token); with a cache, on its tracking
    // connection when it can.
    const read = await runRedis(
      "token.lookup",
      (): Promise<{ value: Buffer | null; keep?: TrackedRead["keep"] }> =>
        cache === undefined
          ? redis()
              .getBuffer(key)
              .then((value) => ({ value }))
          : cache.read(key, () => redis().getBuffer(key)),
      "read",
    );
    const record = read.value === null ? undefined : decodeTokenRecord(read.value);
    if (record === undefined) {
      return undefined;
    }
    const { expiresAtMs } = record;
    if (expiresAtMs !== undefined) {
      const found: StoredToken = { digest: record.digest, name: record.name, expiresAtMs };
      const keep = read.keep;
      if (keep !== undefined) {
        found.keep = () => keep({ digest: record.digest, name: record.name, expiresAtMs });
      }
      return found;
    }
    // A record of layout 0 does not say when it expires: its key does.
    const reply = await runRedis(
      "token.lookup",
      () => redis().perpsLookupTokenBuffer(...LOOKUP_TOKEN.argv({ token: key }, {})),
      "read",
    );
    return reply === null
      ? undefined
      : { digest: record.digest, name: record.name, expiresAtMs: reply[1] };
  };
}
