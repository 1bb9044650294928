// Whether the service can do its work: /readyz, gRPC health and the ready gauge ask it.

import type { RedisHolder } from "../redis/redis-holder.js";

export interface ReadinessOptions {
  redis: RedisHolder;
  /** A PING not answered within this time counts as not ready. Default 500 ms. */
  timeoutMs?: number;
  /** Aborted when the service starts stopping: from then on not ready. Default: never. */
  stopping?: AbortSignal;
  /** Whether checks are answered from the token cache's grace (issue 43). Default: never. */
  servingFromCache?: () => boolean;
}

/**
 * "ready" while Redis answers PING and the service is not stopping: it can
 * do its work. "serving from cache" while Redis cannot answer but checks of
 * the tokens the cache held are answered (TOKEN_CACHE_GRACE_MS): kept in a
 * load balancer's rotation, since every instance is as impaired and this
 * one still answers the platform's checks. "not ready" otherwise.
 */
export type Readiness = "ready" | "serving from cache" | "not ready";

export type ReadinessProbe = () => Promise<Readiness>;

export function createReadinessProbe(opts: ReadinessOptions): ReadinessProbe {
  const timeoutMs = opts.timeoutMs ?? 500;
  const unanswered = (): Readiness =>
    opts.servingFromCache?.() === true ? "serving from cache" : "not ready";
  return async () => {
    const redis = opts.redis.client;
    if (opts.stopping?.aborted === true) {
      return "not ready";
    }
    if (redis.status !== "ready") {
      return unanswered();
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      const answered = await Promise.race([redis.ping().then((r) => r === "PONG"), timeout]);
      return answered ? "ready" : unanswered();
    } catch {
      return unanswered();
    } finally {
      clearTimeout(timer);
    }
  };
}
