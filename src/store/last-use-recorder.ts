// When each token was last used (ListTokens' lastUsedAt), recorded off the
// check's path: a check notes its token's key, at most once a minute per
// token and worker, and a timer writes what was noted every flush interval,
// one script call a token (TOUCH_TOKEN), without any check waiting on it.
// A worker killed with SIGKILL loses at worst what it noted since its last
// flush; a graceful close flushes.

export interface LastUseRecorder {
  /** A live token whose Redis key this is was used now. Costs one Set lookup once noted this minute. */
  used(tokenKey: string): void;
  /**
   * Stops the timer and writes what is noted; resolves once those writes are
   * answered, or after CLOSE_WAIT_MS (a Redis that cannot answer holds no stop).
   */
  close(): Promise<void>;
}

export interface LastUseRecorderOptions {
  /** Writes one token's last use (TokenStore's `touch`). */
  touch(tokenKey: string, usedAtMs: number): Promise<unknown>;
  /** How often what is noted is written, in ms. */
  flushIntervalMs: number;
  /** Told once a flush of how many writes failed, and the first one's error (those uses are lost). */
  failed(err: unknown, writes: number): void;
  /** Server time in Unix ms. */
  now: () => number;
}

const MINUTE_MS = 60_000;
/** Longest a close waits for the last writes. */
const CLOSE_WAIT_MS = 1000;

export function createLastUseRecorder(opts: LastUseRecorderOptions): LastUseRecorder {
  const { touch, failed, now } = opts;
  let minute = -1;
  // The keys noted in this minute, and those not yet written (with the minute of their use).
  let noted = new Set<string>();
  let pending = new Map<string, number>();
  const writing = new Set<Promise<unknown>>();

  function flush(): void {
    if (pending.size === 0) {
      return;
    }
    const batch = [...pending];
    pending = new Map();
    const done = Promise.allSettled(batch.map(([key, usedAtMs]) => touch(key, usedAtMs))).then(
      (results) => {
        const failures = results.filter((r) => r.status === "rejected");
        const [first] = failures;
        if (first !== undefined) {
          failed(first.reason, failures.length);
        }
      },
    );
    writing.add(done);
    void done.finally(() => writing.delete(done));
  }

  const timer = setInterval(flush, opts.flushIntervalMs);
  timer.unref();

  return {
    used(tokenKey) {
      const at = now();
      const thisMinute = Math.floor(at / MINUTE_MS);
      if (thisMinute !== minute) {
        minute = thisMinute;
        noted = new Set();
      }
      if (noted.has(tokenKey)) {
        return;
      }
      noted.add(tokenKey);
      pending.set(tokenKey, thisMinute * MINUTE_MS);
    },
    async close() {
      clearInterval(timer);
      flush();
      let waited: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...writing]),
        new Promise((resolve) => {
          waited = setTimeout(resolve, CLOSE_WAIT_MS);
          waited.unref();
        }),
      ]);
      clearTimeout(waited);
    },
  };
}
