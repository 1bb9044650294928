import { redisFailure } from "../redis/redis-failure.js";

/**
 * Runs one Redis operation: times it for the observer and turns its failure
 * into the error a client may see (`redisFailure`).
 */
export type RedisCall = <T>(operation: string, run: () => Promise<T>) => Promise<T>;

/** Told of every operation: its name, how long it took, whether it failed. */
export type RedisObserver = (operation: string, seconds: number, failed: boolean) => void;

export interface RedisCallOptions {
  /** Default: none (no metrics). */
  observe?: RedisObserver;
}

export function createRedisCall(opts: RedisCallOptions = {}): RedisCall {
  const { observe } = opts;
  return async (operation, run) => {
    const started = performance.now();
    try {
      const result = await run();
      observe?.(operation, (performance.now() - started) / 1000, false);
      return result;
    } catch (err) {
      observe?.(operation, (performance.now() - started) / 1000, true);
      throw redisFailure(err);
    }
  };
}
