// Whether the service can do its work: /readyz, gRPC health and the ready gauge ask it.

import type { RedisHolder } from "../redis/redis-holder.js";

export interface ReadinessOptions {
  redis: RedisHolder;
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
    const redis = opts.redis.client;
    if (opts.stopping?.aborted === true || redis.status !== "ready") {
      return false;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([redis.ping().then((r) => r === "PONG"), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  };
}
