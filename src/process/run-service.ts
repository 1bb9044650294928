import type { Config } from "../config/config.js";
import type { Logger } from "../log/logger.js";
import { createRedisClient, waitForRedisReady } from "../redis/redis-client.js";
import type { RedisTopology } from "../redis/redis-topology.js";
import { createApp } from "../server/app.js";

export interface RunningService {
  ports: { httpPort: number; grpcPort: number };
  /** Stops accepting, finishes calls in flight, closes Redis. */
  stop(): Promise<void>;
}

/** One service process: its Redis client and both listeners. */
export async function runService(
  config: Config,
  topology: RedisTopology,
  logger: Logger,
): Promise<RunningService> {
  const redis = createRedisClient({ topology });
  redis.on("error", (err: Error) => logger.warn({ err: err.message }, "redis connection error"));
  await waitForRedisReady(redis, 5000).catch((err: unknown) =>
    logger.warn({ err: String(err) }, "redis not ready yet; serving and retrying"),
  );
  const app = createApp({
    redis,
    logger,
    host: config.host,
    httpPort: config.httpPort,
    grpcPort: config.grpcPort,
    tokenMaxLifetimeSeconds: config.tokenMaxLifetimeSeconds,
    tokenMaxActivePerUser: config.tokenMaxActivePerUser,
    tokenRateLimitPerMinute: config.tokenRateLimitPerMinute,
    redisMinReplicasAck: config.redisMinReplicasAck,
    redisWaitTimeoutMs: config.redisWaitTimeoutMs,
  });
  const ports = await app.start();
  logger.info({ host: config.host, ...ports }, "listening");
  return {
    ports,
    async stop() {
      await app.stop();
      redis.disconnect();
    },
  };
}
