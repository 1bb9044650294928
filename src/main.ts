import cluster from "node:cluster";
import { type Config, ConfigError, parseConfig } from "./config/config.js";
import { createLogger, type Logger } from "./log/logger.js";
import { EmbeddedRedisError, startEmbeddedRedis } from "./process/embedded-redis.js";
import { freePort } from "./process/free-port.js";
import { readConsole, readTls, runService } from "./process/run-service.js";
import { startWorkers } from "./process/workers.js";
import type { RedisServerProcess } from "./redis/redis-server-process.js";
import type { RedisTopology } from "./redis/redis-topology.js";

function readConfig(): Config {
  try {
    return parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * Runs `stop` once on the first of `signals`, then exits 0. Once only: a
 * terminal's Ctrl-C sends SIGINT to the whole group, and npm forwards its
 * own copy too.
 */
function onSignals(
  logger: Logger,
  stop: () => Promise<void>,
  signals: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"],
): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) {
      return;
    }
    stopping = true;
    logger.info({ signal }, "shutting down");
    stop().then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err: String(err) }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  for (const signal of signals) {
    process.on(signal, () => handle(signal));
  }
}

async function embeddedRedis(dir: string, logger: Logger): Promise<RedisServerProcess> {
  try {
    const { server, stale } = await startEmbeddedRedis(dir, freePort);
    if (stale !== undefined) {
      logger.warn({ dir, ...stale }, "stopped a redis-server left on the embedded folder");
    }
    logger.info({ dir }, "started embedded redis-server");
    // 0 when stopped with the service; anything else is a crash the operator must see.
    server.child.once("exit", (code, signal) =>
      logger[code === 0 ? "info" : "error"]({ code, signal }, "embedded redis-server exited"),
    );
    return server;
  } catch (err) {
    if (err instanceof EmbeddedRedisError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

function topologyOf(server: RedisServerProcess): RedisTopology {
  return "path" in server.location
    ? { kind: "socket", path: server.location.path }
    : { kind: "url", url: server.location.url };
}

async function main(): Promise<void> {
  const config = readConfig();
  if (config.tls !== undefined || config.console) {
    // Fail at once, naming the variable, rather than in each worker.
    try {
      if (config.tls !== undefined) {
        readTls(config.tls);
      }
      if (config.console) {
        readConsole();
      }
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`Configuration error: ${err.message}\n`);
        process.exit(2);
      }
      throw err;
    }
  }
  const logger = createLogger({ level: config.logLevel });

  if (cluster.isWorker) {
    // The primary made sure a Redis is configured (REDIS_URL of the embedded one).
    if (config.redis === undefined) {
      throw new Error("a worker needs a configured Redis");
    }
    const service = await runService(config, config.redis, logger);
    // Ctrl-C sends SIGINT to the whole group: the primary stops the workers
    // (SIGTERM), so that none exits before the primary knows it is stopping
    // (it would start another).
    process.on("SIGINT", () => {});
    onSignals(logger, () => service.stop(), ["SIGTERM"]);
    return;
  }

  const embedded =
    config.redis === undefined ? await embeddedRedis(config.embeddedRedisDir, logger) : undefined;
  const topology = config.redis ?? (embedded === undefined ? undefined : topologyOf(embedded));
  if (topology === undefined) {
    throw new Error("no Redis topology");
  }

  if (config.workers === 1) {
    const service = await runService(config, topology, logger);
    onSignals(logger, async () => {
      await service.stop();
      await embedded?.stop();
    });
    return;
  }

  const env: Record<string, string> =
    embedded === undefined
      ? {}
      : {
          REDIS_URL:
            "path" in embedded.location
              ? `unix://${embedded.location.path}`
              : embedded.location.url,
        };
  const workers = startWorkers({ count: config.workers, logger, env });
  logger.info({ workers: config.workers }, "started workers");
  onSignals(logger, async () => {
    await workers.stop();
    await embedded?.stop();
  });
}

await main();
