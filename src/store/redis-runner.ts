import { isTransientRedisFailure } from "../redis/redis-failure.js";
import { StoreError } from "./store-error.js";

/**
 * Runs one Redis operation of the store: times it for the observer and turns
 * its failure into a {@link StoreError} ("unavailable", or "rejected" for an
 * error reply a retry would get again). A "read" fails (unavailable) once the
 * read deadline passes, however long its command still waits.
 */
export type RedisRunner = <T>(
  operation: string,
  run: () => Promise<T>,
  kind?: "read" | "write",
) => Promise<T>;

/** Told of every operation: its name, how long it took, whether it failed. */
export type RedisObserver = (operation: string, seconds: number, failed: boolean) => void;

/** Starts an operation's trace span, if any; the result ends it. */
export type RedisTracer = (operation: string) => ((failed: boolean) => void) | undefined;

export interface RedisRunnerOptions {
  /** Default: none (no metrics). */
  observe?: RedisObserver;
  /** Default: none (no spans). */
  trace?: RedisTracer;
  /**
   * Longest wait for a read's answer. ioredis' auto-pipelining sends a batch
   * only once the connection's previous batch answered, so while Redis stalls
   * a command can wait out an earlier batch's command timeout before its own:
   * two timeouts. A read is safe to give up on; a write is not (its rollback
   * must follow it on its connection), so writes keep the command timeout.
   * Default 1000 ms, the command timeout.
   */
  readDeadlineMs?: number;
}

class ReadDeadlineError extends Error {
  override readonly name = "ReadDeadlineError";
}

/** `run`'s result, or a ReadDeadlineError after `ms`; a late failure of `run` is dropped. */
function withDeadline<T>(run: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadDeadlineError(`no answer within ${ms} ms`)), ms);
  });
  run.catch(() => undefined);
  return Promise.race([run, deadline]).finally(() => clearTimeout(timer));
}

export function createRedisRunner(opts: RedisRunnerOptions = {}): RedisRunner {
  const { observe, trace } = opts;
  const readDeadlineMs = opts.readDeadlineMs ?? 1000;
  return async (operation, run, kind) => {
    const started = performance.now();
    const spanEnd = trace?.(operation);
    try {
      const result = await (kind === "read" ? withDeadline(run(), readDeadlineMs) : run());
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
