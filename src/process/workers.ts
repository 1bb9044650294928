// The primary's worker processes (node:cluster): only forked workers show
// them sharing ports, being replaced and giving up.
// Tested by test/integration/workers.test.ts, test/integration/worker-channel.test.ts,
// test/integration/second-start.test.ts.

import cluster, { type Worker } from "node:cluster";
import type { Logger } from "../log/logger.js";

export interface WorkersOptions {
  count: number;
  logger: Logger;
  /** Environment added to each worker's (e.g. where the embedded Redis is). */
  env: Record<string, string>;
  /**
   * Node flags each worker starts with, before the primary's own (so that an
   * operator's flag of the same name wins).
   */
  nodeFlags: readonly string[];
  /**
   * A worker exiting with `exitCode` cannot serve on this host (a port in
   * use): it is not replaced, and `onGiveUp` runs once with the line it sent
   * (`process.send({ giveUp: line })`) before exiting. Default: every dead
   * worker is replaced.
   */
  giveUp?: { exitCode: number; onGiveUp(line: string): void };
  /** Runs each time a dead worker is replaced (the primary counts it). Default: nothing. */
  onRestart?: () => void;
  /**
   * Runs once, when the first `count` workers have said they listen
   * (`process.send({ listening: ports })`), with the ports of the first.
   * Default: nothing.
   */
  onListening?: (ports: ListeningPorts) => void;
}

/** The ports a worker listens on, as it tells the primary. */
export interface ListeningPorts {
  publicPort: number;
  internalPort: number;
}

function listeningPorts(message: unknown): ListeningPorts | undefined {
  const ports = (message as { listening?: unknown } | null)?.listening;
  if (typeof ports !== "object" || ports === null) {
    return undefined;
  }
  const { publicPort, internalPort } = ports as Record<string, unknown>;
  return typeof publicPort === "number" && typeof internalPort === "number"
    ? { publicPort, internalPort }
    : undefined;
}

export interface Workers {
  /** Asks every worker to stop gracefully and waits until all have exited. */
  stop(): Promise<void>;
}

/**
 * Runs `count` service processes (node:cluster) that share the listening
 * ports. A worker that dies unexpectedly is replaced.
 */
export function startWorkers(opts: WorkersOptions): Workers {
  let stopping = false;
  let line = "";
  cluster.setupPrimary({ execArgv: [...opts.nodeFlags, ...process.execArgv] });
  const fork = (): Worker => {
    const worker = cluster.fork(opts.env);
    // A message to a worker that has just exited fails (EPIPE): cluster's own
    // reply to a worker that listened and then gave up, a metrics scrape. The
    // exit handler deals with the worker; unhandled, the error would end the
    // primary.
    worker.on("error", (err: Error) => {
      opts.logger.debug(
        { workerPid: worker.process.pid, err },
        "message to a worker not delivered",
      );
    });
    return worker;
  };
  let listening = 0;
  let firstPorts: ListeningPorts | undefined;
  cluster.on("message", (_worker, message: unknown) => {
    const giveUp = (message as { giveUp?: unknown } | null)?.giveUp;
    if (typeof giveUp === "string" && line === "") {
      line = giveUp;
    }
    const ports = listeningPorts(message);
    if (ports !== undefined) {
      firstPorts ??= ports;
      listening++;
      if (listening === opts.count) {
        opts.onListening?.(firstPorts);
      }
    }
  });
  cluster.on("exit", (worker, code, signal) => {
    if (opts.giveUp !== undefined && code === opts.giveUp.exitCode) {
      if (!stopping) {
        stopping = true;
        opts.giveUp.onGiveUp(line || `a worker exited with code ${code}`);
      }
      return;
    }
    if (!stopping) {
      // `workerPid`, not `pid`: the line's `pid` is the primary's (the logger's base).
      opts.logger.error(
        { workerPid: worker.process.pid, code, signal },
        "worker died; starting another",
      );
      opts.onRestart?.();
      fork();
    }
  });
  for (let i = 0; i < opts.count; i++) {
    fork();
  }
  return {
    async stop() {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              if (worker.isDead()) {
                resolve();
                return;
              }
              worker.once("exit", () => resolve());
              worker.process.kill("SIGTERM");
            }),
        ),
      );
    },
  };
}
