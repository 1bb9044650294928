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
export interface UserKeyCache {
  get(userKey: string): readonly string[] | undefined;
  set(userKey: string, keys: readonly string[]): void;
  delete(userKey: string): void;
}

/** At most `maxUsers` users (oldest first out), so memory stays bounded. */
export function createUserKeyCache(maxUsers: number): UserKeyCache {
  const entries = new Map<string, readonly string[]>();
  return {
    get: (userKey) => entries.get(userKey),
    set(userKey, keys) {
      if (!entries.has(userKey) && entries.size >= maxUsers) {
        // Map iterates in insertion order: the first key is the oldest entry.
        const oldest = entries.keys().next();
        if (oldest.done !== true) {
          entries.delete(oldest.value);
        }
      }
      entries.set(userKey, keys);
    },
    delete: (userKey) => {
      entries.delete(userKey);
    },
  };
}
