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
export interface PublicKeyCache {
  get(userId: string): readonly string[] | undefined;
  set(userId: string, publicKeys: readonly string[]): void;
  delete(userId: string): void;
}

/** At most `maxUsers` users (oldest first out), so memory stays bounded. */
export function createPublicKeyCache(maxUsers: number): PublicKeyCache {
  const entries = new Map<string, readonly string[]>();
  return {
    get: (userId) => entries.get(userId),
    set(userId, publicKeys) {
      if (!entries.has(userId) && entries.size >= maxUsers) {
        // Map iterates in insertion order: the first key is the oldest entry.
        const oldest = entries.keys().next();
        if (oldest.done !== true) {
          entries.delete(oldest.value);
        }
      }
      entries.set(userId, publicKeys);
    },
    delete: (userId) => {
      entries.delete(userId);
    },
  };
}
