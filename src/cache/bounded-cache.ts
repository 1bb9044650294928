/**
 * A map of at most `maxEntries` entries that forgets its oldest entry first
 * when a new one comes (first in, first out: a read does not renew an entry,
 * so a hit costs one lookup and nothing else).
 */
export interface BoundedCache<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  delete(key: K): void;
  /** Forgets every entry whose key passes `test` (walks them all: for rare events). */
  deleteIf(test: (key: K) => boolean): void;
  /** Forgets every entry. */
  clear(): void;
  /** How many entries it holds. */
  readonly size: number;
}

export function createBoundedCache<K, V>(maxEntries: number): BoundedCache<K, V> {
  const entries = new Map<K, V>();
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      if (!entries.has(key) && entries.size >= maxEntries) {
        // Map iterates in insertion order: the first key is the oldest entry.
        const oldest = entries.keys().next();
        if (oldest.done !== true) {
          entries.delete(oldest.value);
        }
      }
      entries.set(key, value);
    },
    delete(key) {
      entries.delete(key);
    },
    deleteIf(test) {
      // Deleting the entry being visited is safe while iterating a Map.
      for (const key of entries.keys()) {
        if (test(key)) {
          entries.delete(key);
        }
      }
    },
    clear() {
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
