import { isTransientRedisFailure } from "../redis/redis-failure.js";
import { StoreError } from "./store-error.js";

/**
 * Runs one Redis operation of the store: times it for the observer and turns
 * its failure into a {@link StoreError} ("unavailable", or "rejected" for an
 * error reply a retry would get again).
 */
export type RedisCall = <T>(operation: string, run: () => Promise<T>) => Promise<T>;

/** Told of every operation: its name, how long it took, whether it failed. */
export type RedisObserver = (operation: string, seconds: number, failed: boolean) => void;

/** Starts an operation's trace span, if any; the result ends it. */
export type RedisTracer = (operation: string) => ((failed: boolean) => void) | undefined;

export interface RedisCallOptions {
  /** Default: none (no metrics). */
  observe?: RedisObserver;
  /** Default: none (no spans). */
  trace?: RedisTracer;
}

export function createRedisCall(opts: RedisCallOptions = {}): RedisCall {
  const { observe, trace } = opts;
  return async (operation, run) => {
    const started = performance.now();
    const spanEnd = trace?.(operation);
    try {
      const result = await run();
      observe?.(operation, (performance.now() - started) / 1000, false);
      spanEnd?.(false);
      return result;
    } catch (err) {
      observe?.(operation, (performance.now() - started) / 1000, true);
      spanEnd?.(true);
      if (err instanceof StoreError) {
        throw err;
      }
      throw new StoreError(isTransientRedisFailure(err) ? "unavailable" : "rejected", {
        cause: err,
      });
    }
  };
}
