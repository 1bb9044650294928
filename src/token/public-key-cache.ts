import { type BoundedCache, createBoundedCache } from "../cache/bounded-cache.js";

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
