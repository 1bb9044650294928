// The entry point of `npm start`: reads the configuration and the files it
// names, claims the data folder and the ports, starts the embedded Redis and
// one service process or a primary with workers, and stops them on a signal.
// Only whole starts show it. Tested by test/integration/start.test.ts,
// test/integration/second-start.test.ts, test/integration/workers.test.ts,
// test/integration/operator-credentials.test.ts.

// First: on a Node.js too old, this stops the start before anything else loads.
import "./process/node-gate.mjs";
import cluster from "node:cluster";
import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { ensureGeneratedOperator } from "./admin-auth/generated-operator.js";
import {
  type CredentialsFileRead,
  readCredentialsFile,
} from "./admin-auth/watched-credentials-file.js";
import { type Config, ConfigError, deprecationNotice, parseConfig } from "./config/config.js";
import { untrustedReason } from "./config/trusted-path.js";
import { createLogger, type Logger } from "./log/logger.js";
import { serveClusterMetrics } from "./metrics/cluster-metrics.js";
import { createServiceMetrics } from "./metrics/service-metrics.js";
import {
  acquireInstanceLock,
  EmbeddedRedisError,
  startEmbeddedRedis,
} from "./process/embedded-redis.js";
import {
  freePort,
  IN_USE_EXIT_CODE,
  inUseLine,
  type ListenAddress,
  listenerInUse,
  portsInUse,
  readyLine,
} from "./process/ports.js";
import type { RunningService } from "./process/run-service.js";
import { readStartFiles, type StartFiles } from "./process/start-files.js";
import { type ListeningPorts, startWorkers } from "./process/workers.js";
import type { RedisServerProcess } from "./redis/redis-server-process.js";
import type { RedisTopology } from "./redis/redis-topology.js";

/**
 * Runs the service in this process, loading it first: a primary with
 * workers never runs it, so it never loads it (Connect, protobuf, ioredis,
 * the listeners: tens of MB it would hold for nothing).
 */
async function runService(
  config: Config,
  files: StartFiles,
  topology: RedisTopology,
  logger: Logger,
): Promise<RunningService> {
  const { runService: run } = await import("./process/run-service.js");
  return run(config, files, topology, logger);
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

async function embeddedRedis(
  dir: string,
  logger: Logger,
  lockHeld: () => boolean,
): Promise<RedisServerProcess> {
  try {
    const { server, stale } = await startEmbeddedRedis(dir, freePort, lockHeld);
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

function listenersOf(config: Config): ListenAddress[] {
  return [
    { variable: "PUBLIC_PORT", host: config.host, port: config.publicPort },
    { variable: "INTERNAL_PORT", host: config.internalHost, port: config.internalPort },
  ];
}

/** Ends a start that found something in use: one line, no stack. */
function exitInUse(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(IN_USE_EXIT_CODE);
}

/**
 * Before anything is stopped or started: the embedded data folder's lock is
 * taken (its Redis belongs to the instance holding it), and the ports must be
 * free, so that a second start harms nothing and ends at once with one line.
 * The lock goes with this process: it is a socket file in the folder that the
 * process listens on, which refuses connections once it dies however it dies.
 * Returns whether the lock is still this process's (always, without one).
 */
async function claimOrExit(config: Config): Promise<() => boolean> {
  const lock =
    config.redis === undefined
      ? await acquireInstanceLock({ dir: config.embeddedRedisDir })
      : undefined;
  if (lock?.held === true) {
    process.on("exit", () => lock.release());
  }
  const ports = await portsInUse(listenersOf(config));
  if (ports.length > 0 || lock?.held === false) {
    exitInUse(
      inUseLine({
        ports,
        ...(lock?.held === false
          ? { folder: { dir: resolve(config.embeddedRedisDir), ownerPid: lock.ownerPid } }
          : {}),
      }),
    );
  }
  return lock?.held === true ? lock.stillHeld : () => true;
}

/**
 * The operators' credentials file as read: ADMIN_CREDENTIALS_FILE's
 * (`configured`); none with only ADMIN_CLIENT_CA_FILE (certificates name the
 * operators); else the generated operator's in the data folder, written by
 * the first start (here, in the primary, before any worker), which says where
 * in one line.
 */
function operatorsOf(
  config: Config,
  configured: CredentialsFileRead | undefined,
  logger: Logger,
): CredentialsFileRead | undefined {
  if (!generatesOperator(config)) {
    return configured;
  }
  const generated = ensureGeneratedOperator(config.embeddedRedisDir);
  const read = exitOnConfigError(() => {
    const file = readCredentialsFile(generated.credentialsFile, "ADMIN_CREDENTIALS_FILE");
    const secret = existsSync(generated.secretFile)
      ? untrustedReason(generated.secretFile, "file")
      : undefined;
    if (secret !== undefined) {
      throw new ConfigError(
        `${generated.secretFile} ${secret}; only this service's user may own it`,
      );
    }
    return file;
  });
  if (generated.created) {
    // A warning: a production deployment names its operators in a file of its own.
    logger.warn(
      {
        operator: "local",
        secretFile: generated.secretFile,
        credentialsFile: generated.credentialsFile,
      },
      `no ADMIN_CREDENTIALS_FILE: generated operator local, its secret in ${generated.secretFile} (perps-tokens reads ./.data/redis/operator-secret by default, else --operator-secret-file)`,
    );
  }
  return read;
}

function topologyOf(server: RedisServerProcess): RedisTopology {
  return "path" in server.location
    ? { kind: "socket", path: server.location.path }
    : { kind: "url", url: server.location.url };
}

/**
 * The start's one human line, on stderr: the log on stdout stays JSON for
 * machines, and a terminal shows both.
 */
function sayReady(config: Config, ports: ListeningPorts): void {
  process.stderr.write(
    `${readyLine({
      host: config.host,
      internalHost: config.internalHost,
      ...ports,
      tls: config.tls !== undefined,
      console: config.console,
      workers: config.workers,
    })}\n`,
  );
}

/** Resolves once the lines logged so far are written (the log is batched, see createLogger). */
function flushed(logger: Logger): Promise<void> {
  return new Promise((done) => logger.flush(() => done()));
}

/** Whether the first start writes operator `local` into the data folder (no ADMIN_CREDENTIALS_FILE, no mTLS). */
function generatesOperator(config: Config): boolean {
  return config.adminCredentialsFile === undefined && config.adminClientCaFile === undefined;
}

/**
 * Runs `check` and returns what it returns; a ConfigError it throws ends the
 * start: one line a problem, exit code 2. The one place a start prints one.
 */
function exitOnConfigError<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.problems.map((p) => `Configuration error: ${p}\n`).join(""));
      process.exit(2);
    }
    throw err;
  }
}

/**
 * The data folder, when used (embedded Redis, generated operator), must be
 * this user's and writable by nobody else, as its files choose the operators
 * and hold the lock and the Redis: created so when missing, refused otherwise.
 */
function trustDataFolder(config: Config): void {
  if (config.redis !== undefined && !generatesOperator(config)) {
    return;
  }
  const dir = resolve(config.embeddedRedisDir);
  exitOnConfigError(() => {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const untrusted = untrustedReason(dir, "folder");
    if (untrusted !== undefined) {
      throw new ConfigError(
        `EMBEDDED_REDIS_DIR: the data folder ${dir} ${untrusted}; another user could plant its credentials or take its lock: make it this user's, chmod 700`,
      );
    }
  });
}

async function main(): Promise<void> {
  const config = exitOnConfigError(() => parseConfig(process.env));
  if (cluster.isPrimary) {
    trustDataFolder(config);
  }
  // Fail at once, naming the variable, rather than in each worker. The files
  // are read here once and handed to the service this process runs.
  const files = exitOnConfigError(() => readStartFiles(config));
  const logger = createLogger({ level: config.logLevel });
  // Once per start: workers read the same environment.
  if (cluster.isPrimary && config.oldNames.length > 0) {
    logger.warn(
      { deprecated: config.oldNames.map((v) => v.old) },
      deprecationNotice(config.oldNames),
    );
  }

  if (cluster.isWorker) {
    // The primary made sure a Redis is configured (REDIS_URL of the embedded one).
    if (config.redis === undefined) {
      throw new Error("a worker needs a configured Redis");
    }
    const service = await runService(config, files, config.redis, logger).catch(
      async (err: unknown) => {
        const listener = listenerInUse(err, listenersOf(config));
        if (listener === undefined) {
          throw err;
        }
        // The primary prints it once, whichever workers lost the race.
        const line = inUseLine({ ports: [listener] });
        await new Promise((sent) => {
          if (process.send === undefined) {
            process.stderr.write(`${line}\n`);
            sent(undefined);
          } else {
            process.send({ giveUp: line }, sent);
          }
        });
        process.exit(IN_USE_EXIT_CODE);
      },
    );
    // Ctrl-C sends SIGINT to the whole group: the primary stops the workers
    // (SIGTERM), so that none exits before the primary knows it is stopping
    // (it would start another).
    process.on("SIGINT", () => {});
    process.on("SIGHUP", () => service.reloadCredentials());
    onSignals(logger, () => service.stop(), ["SIGTERM"]);
    // The primary's ready line follows every worker's own lines.
    await flushed(logger);
    process.send?.({ listening: service.ports });
    return;
  }

  const lockHeld = await claimOrExit(config);
  const settled = {
    ...files,
    adminCredentials: operatorsOf(config, files.adminCredentials, logger),
  };
  const embedded =
    config.redis === undefined
      ? await embeddedRedis(config.embeddedRedisDir, logger, lockHeld)
      : undefined;
  const topology = config.redis ?? (embedded === undefined ? undefined : topologyOf(embedded));
  if (topology === undefined) {
    throw new Error("no Redis topology");
  }

  if (config.workers === 1) {
    const service = await runService(config, settled, topology, logger).catch(
      async (err: unknown) => {
        // A port taken since claimOrExit looked.
        const listener = listenerInUse(err, listenersOf(config));
        if (listener === undefined) {
          throw err;
        }
        await embedded?.stop();
        return exitInUse(inUseLine({ ports: [listener] }));
      },
    );
    process.on("SIGHUP", () => service.reloadCredentials());
    onSignals(logger, async () => {
      await service.stop();
      await embedded?.stop();
    });
    await flushed(logger);
    sayReady(config, service.ports);
    return;
  }

  const env: Record<string, string> = {
    ...(settled.adminCredentials === undefined
      ? {}
      : { ADMIN_CREDENTIALS_FILE: settled.adminCredentials.path }),
    ...(embedded === undefined
      ? {}
      : {
          REDIS_URL:
            "path" in embedded.location
              ? `unix://${embedded.location.path}`
              : embedded.location.url,
        }),
  };
  // The primary's own metric (worker restarts) joins every scrape's answer.
  const primaryMetrics = createServiceMetrics({ processMetrics: false });
  serveClusterMetrics({ registry: primaryMetrics.registry });
  const workers = startWorkers({
    count: config.workers,
    logger,
    env,
    nodeFlags:
      config.workerSemiSpaceMb === 0 ? [] : [`--max-semi-space-size=${config.workerSemiSpaceMb}`],
    onRestart: () => primaryMetrics.workerRestarts.inc(),
    onListening: (ports) => {
      void flushed(logger).then(() => sayReady(config, ports));
    },
    giveUp: {
      exitCode: IN_USE_EXIT_CODE,
      onGiveUp: (line) => {
        void workers
          .stop()
          .then(() => embedded?.stop())
          .finally(() => exitInUse(line));
      },
    },
  });
  logger.info({ workers: config.workers, reusePort: config.reusePort }, "started workers");
  // Each worker re-reads the credentials file itself.
  process.on("SIGHUP", () => {
    for (const worker of Object.values(cluster.workers ?? {})) {
      worker?.process.kill("SIGHUP");
    }
  });
  onSignals(logger, async () => {
    await workers.stop();
    await embedded?.stop();
  });
}

await main();
