// Writes the store acknowledges only once enough replicas confirmed them
// (Redis WAIT, on lanes of their own), and the undo of those they did not.
//
// Tested by test/integration/token-store.test.ts, test/integration/replica-wait.test.ts.

import type { ChainableCommander } from "ioredis";
import type { RedisClient } from "../redis/redis-client.js";
import { isTransientRedisFailure } from "../redis/redis-failure.js";

export interface DurableWriterOptions {
  /** The client for writes that wait for no replica (read per write). */
  redis: () => RedisClient;
  /**
   * Clients for writes that wait for replicas, each carrying one write and
   * its WAIT at a time (WAIT blocks its connection). Default: `redis` alone,
   * which then also blocks the reads sent on it; the service gives each lane
   * a connection of its own (redis-connections.ts).
   */
  lanes?: readonly (() => RedisClient)[];
  /** Replicas that must confirm each write (Redis WAIT); 0 waits for none. Default 0. */
  minReplicasAck?: number;
  /**
   * Replicas that must confirm each revocation (`revoke`), asked at each one:
   * what the topology has may be learnt while the service runs
   * (revocation-replicas.ts). Default: `minReplicasAck`.
   */
  revocationReplicasAck?: () => number;
  /** How long WAIT may take before the write counts as unconfirmed (REDIS_WAIT_TIMEOUT_MS). */
  waitTimeoutMs: number;
  /**
   * How long a write may wait for a free lane; past it the write fails
   * (unavailable) without having been sent. Default 1000 ms.
   */
  laneWaitMs?: number;
  /** How long an undo is retried while Redis does not answer it. Default 5000 ms. */
  undoBudgetMs?: number;
  /**
   * How long the write waits for its undo's answer before it settles; the
   * undo is sent on the write's connection before that, so it runs after the
   * write, and it goes on being retried within `undoBudgetMs`. Default 250 ms.
   */
  undoWaitMs?: number;
}

/** Undoes a write that must not stay: run when it was not confirmed, or its outcome is unknown. */
export interface WriteUndo<T> {
  /** Whether a reply that replicas did not confirm must be undone (e.g. only a create that happened). */
  needed: (reply: T) => boolean;
  run: (client: RedisClient) => Promise<unknown>;
}

export interface DurableWriter {
  /**
   * Runs a write. With `minReplicasAck` > 0 it is pipelined with `WAIT` on a
   * lane of its own, so WAIT goes to the same node on the same connection, in
   * one round trip, and blocks nothing else. `confirmed` is false when fewer
   * replicas than required acknowledged it. With `undo`, a write that was not
   * confirmed, or whose outcome is unknown (timed out, connection lost), is
   * undone on the same connection before this settles: a command sent after
   * the write on one connection runs after it, should the write still run.
   */
  write<T>(
    direct: (client: RedisClient) => Promise<T>,
    queued: (pipeline: ChainableCommander) => ChainableCommander,
    undo?: WriteUndo<T>,
  ): Promise<{ reply: T; confirmed: boolean }>;
  /**
   * Runs a revocation: as `write` (without undo: a deletion is never rolled
   * back), confirmed by `revocationReplicasAck()` replicas.
   */
  revoke<T>(
    direct: (client: RedisClient) => Promise<T>,
    queued: (pipeline: ChainableCommander) => ChainableCommander,
  ): Promise<{ reply: T; confirmed: boolean }>;
}

/** The write's outcome is unknown: its reply never came. */
function replyLost(err: unknown): boolean {
  return isTransientRedisFailure(err) && !(err instanceof Error && err.name === "ReplyError");
}

export function createDurableWriter(opts: DurableWriterOptions): DurableWriter {
  const minReplicasAck = opts.minReplicasAck ?? 0;
  const revocationReplicasAck = opts.revocationReplicasAck ?? (() => minReplicasAck);
  const timeout = opts.waitTimeoutMs;
  const laneWaitMs = opts.laneWaitMs ?? 1000;
  const undoBudgetMs = opts.undoBudgetMs ?? 5000;
  const undoWaitMs = opts.undoWaitMs ?? 250;
  const lanes = opts.lanes !== undefined && opts.lanes.length > 0 ? opts.lanes : [opts.redis];
  const free = lanes.map((_, i) => i);
  const waiting: ((lane: number) => void)[] = [];

  const lease = (): Promise<number> => {
    const lane = free.pop();
    if (lane !== undefined) {
      return Promise.resolve(lane);
    }
    return new Promise((resolve, reject) => {
      const take = (leased: number) => {
        clearTimeout(timer);
        resolve(leased);
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(take), 1);
        reject(
          new Error(
            `no connection for a write waiting for replicas was free within ${laneWaitMs} ms`,
          ),
        );
      }, laneWaitMs);
      waiting.push(take);
    });
  };
  const release = (lane: number): void => {
    const next = waiting.shift();
    if (next === undefined) {
      free.push(lane);
    } else {
      next(lane);
    }
  };

  /** Runs the undo until Redis answers it, within the budget; false if it never did. */
  const undoUntilAnswered = async (client: () => RedisClient, run: WriteUndo<unknown>["run"]) => {
    const deadline = performance.now() + undoBudgetMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await run(client());
        return true;
      } catch (err) {
        if (!replyLost(err) || performance.now() + 100 * attempt > deadline) {
          return false;
        }
        // Retries never keep a stopping process alive.
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt).unref());
      }
    }
  };
  /** Sends the undo (now, so it follows the write) and waits a little for its answer. */
  const undoOn = async (client: () => RedisClient, run: WriteUndo<unknown>["run"]) => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      undoUntilAnswered(client, run),
      new Promise((resolve) => {
        timer = setTimeout(resolve, undoWaitMs);
      }),
    ]);
    clearTimeout(timer);
  };

  /** Rethrows a write's failure, undoing it first when its reply was lost. */
  const failed = async (
    err: unknown,
    client: () => RedisClient,
    undo: WriteUndo<never> | undefined,
  ): Promise<never> => {
    if (undo !== undefined && replyLost(err)) {
      await undoOn(client, undo.run);
    }
    throw err;
  };

  const run = async <T>(
    required: number,
    direct: (client: RedisClient) => Promise<T>,
    queued: (pipeline: ChainableCommander) => ChainableCommander,
    undo?: WriteUndo<T>,
  ): Promise<{ reply: T; confirmed: boolean }> => {
    if (required === 0) {
      try {
        return { reply: await direct(opts.redis()), confirmed: true };
      } catch (err) {
        return failed(err, opts.redis, undo as WriteUndo<never> | undefined);
      }
    }
    const lane = await lease();
    const client = lanes[lane] ?? opts.redis;
    try {
      let results: [Error | null, unknown][];
      try {
        results = (await queued(client().pipeline()).wait(required, timeout).exec()) ?? [];
      } catch (err) {
        return await failed(err, client, undo as WriteUndo<never> | undefined);
      }
      const [write, wait] = results;
      if (write === undefined || wait === undefined) {
        throw new Error("the write pipeline returned no replies");
      }
      if (write[0] !== null) {
        return await failed(write[0], client, undo as WriteUndo<never> | undefined);
      }
      const reply = write[1] as T;
      if (wait[0] !== null) {
        if (undo?.needed(reply) === true) {
          await undoOn(client, undo.run);
        }
        throw wait[0];
      }
      const confirmed = Number(wait[1]) >= required;
      if (!confirmed && undo?.needed(reply) === true) {
        await undoOn(client, undo.run);
      }
      return { reply, confirmed };
    } finally {
      release(lane);
    }
  };

  return {
    write: (direct, queued, undo) => run(minReplicasAck, direct, queued, undo),
    revoke: (direct, queued) => run(revocationReplicasAck(), direct, queued),
  };
}
