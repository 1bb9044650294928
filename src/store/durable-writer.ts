import type { ChainableCommander } from "ioredis";
import type { RedisClient } from "../redis/redis-client.js";

export interface DurableWriterOptions {
  redis: RedisClient;
  /** Replicas that must confirm each write (Redis WAIT); 0 waits for none. Default 0. */
  minReplicasAck?: number;
  /** How long WAIT may take before the write counts as unconfirmed. Default 500 ms. */
  waitTimeoutMs?: number;
}

export interface DurableWriter {
  /**
   * Runs a write. With `minReplicasAck` > 0 it is pipelined with `WAIT`, so
   * WAIT goes to the same node on the same connection, in one round trip.
   * `confirmed` is false when fewer replicas than required acknowledged it.
   */
  write<T>(
    direct: () => Promise<T>,
    queued: (pipeline: ChainableCommander) => ChainableCommander,
  ): Promise<{ reply: T; confirmed: boolean }>;
}

export function createDurableWriter(opts: DurableWriterOptions): DurableWriter {
  const required = opts.minReplicasAck ?? 0;
  const timeout = opts.waitTimeoutMs ?? 500;
  return {
    async write<T>(
      direct: () => Promise<T>,
      queued: (pipeline: ChainableCommander) => ChainableCommander,
    ) {
      if (required === 0) {
        return { reply: await direct(), confirmed: true };
      }
      const results = (await queued(opts.redis.pipeline()).wait(required, timeout).exec()) ?? [];
      const [write, wait] = results;
      if (write === undefined || wait === undefined) {
        throw new Error("the write pipeline returned no replies");
      }
      if (write[0] !== null) {
        throw write[0];
      }
      if (wait[0] !== null) {
        throw wait[0];
      }
      return { reply: write[1] as T, confirmed: Number(wait[1]) >= required };
    },
  };
}
