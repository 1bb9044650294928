import type { RedisClient } from "../redis/redis-client.js";

export interface ReadinessOptions {
  redis: RedisClient;
  /** A PING not answered within this time counts as not ready. Default 500 ms. */
  timeoutMs?: number;
  /** Aborted when the service starts stopping: from then on not ready. Default: never. */
  stopping?: AbortSignal;
}

/** True while Redis answers PING and the service is not stopping: it can do its work. */
export type ReadinessProbe = () => Promise<boolean>;

export function createReadinessProbe(opts: ReadinessOptions): ReadinessProbe {
  const timeoutMs = opts.timeoutMs ?? 500;
  return async () => {
    if (opts.stopping?.aborted === true || opts.redis.status !== "ready") {
      return false;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([opts.redis.ping().then((r) => r === "PONG"), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  };
}
