import { resolve } from "node:path";
import { ConfigError, parseConfig } from "./config/config.js";
import { createLogger } from "./log/logger.js";
import { createRedisClient, type RedisLocation, waitForRedisReady } from "./redis/redis-client.js";
import {
  RedisBinaryMissingError,
  type RedisServerProcess,
  startRedisServerProcess,
} from "./redis/redis-server-process.js";
import { createApp } from "./server/app.js";

// Where the embedded redis-server keeps its data (AOF) when REDIS_URL is unset.
const EMBEDDED_REDIS_DIR = resolve(".data/redis");
// Unix socket paths are limited to about 107 bytes.
const MAX_SOCKET_PATH = 100;

async function main(): Promise<void> {
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });

  let embedded: RedisServerProcess | undefined;
  let location: RedisLocation;
  if (config.redisUrl === undefined) {
    try {
      embedded = await startRedisServerProcess({
        dir: EMBEDDED_REDIS_DIR,
        port: EMBEDDED_REDIS_DIR.length < MAX_SOCKET_PATH ? "unix" : await freePort(),
        appendOnly: true,
      });
    } catch (err) {
      if (err instanceof RedisBinaryMissingError) {
        process.stderr.write(
          "No redis-server binary on PATH. Install one (e.g. `apt-get install redis-server`, " +
            "`brew install redis`) or set REDIS_URL to a running Redis.\n",
        );
        process.exit(1);
      }
      throw err;
    }
    location = embedded.location;
    logger.info({ dir: EMBEDDED_REDIS_DIR }, "started embedded redis-server");
  } else {
    location = { url: config.redisUrl };
  }

  const redis = createRedisClient({ location });
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
  });
  const ports = await app.start();
  logger.info({ host: config.host, ...ports }, "listening");

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      return;
    }
    stopping = true;
    logger.info({ signal }, "shutting down");
    await app.stop();
    redis.disconnect();
    await embedded?.stop();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

await main();
