/** A promise made on first use and kept for the uses after it. */
export interface KeptPromise<T> {
  /** The kept promise; made by `make()` when there is none. */
  get(): Promise<T>;
  /** The kept promise, if one was made and not dropped. */
  current(): Promise<T> | undefined;
  /** Forgets the kept promise: the next get() makes a new one. */
  drop(): void;
}

/**
 * `make()` on first use, its promise kept for the uses after it. A rejected
 * one is dropped, so the next use tries again rather than reusing a stale
 * rejection (no HTTP/2 in a browser, a chunk that failed to download).
 */
export function keptUnlessRejected<T>(make: () => Promise<T>): KeptPromise<T> {
  let kept: Promise<T> | undefined;
  return {
    get() {
      if (kept !== undefined) {
        return kept;
      }
      const attempt = make();
      kept = attempt;
      attempt.catch(() => {
        if (kept === attempt) {
          kept = undefined;
        }
      });
      return attempt;
    },
    current: () => kept,
    drop() {
      kept = undefined;
    },
  };
}
