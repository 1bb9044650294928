import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

export interface RedisServerProcessOptions {
  /** Folder for the data and the socket; created when missing. */
  dir: string;
  /** TCP port on 127.0.0.1, or "unix" for a socket `redis.sock` in `dir` (no TCP). */
  port: number | "unix";
  /** Keep an append-only file, so that data survives a restart. Default false. */
  appendOnly?: boolean;
  /** The server binary. Default "redis-server" from PATH. */
  binary?: string;
  /** A config file to start from (given first, before the other arguments). */
  configFile?: string;
  /** Extra `--name value` arguments, e.g. `["--cluster-enabled", "yes"]`. */
  extraArgs?: string[];
  /** The log line that says the server is ready. Default /ready to accept connections/i. */
  readyPattern?: RegExp;
  /** How long to wait for the server to accept connections. Default 10000 ms. */
  startTimeoutMs?: number;
  /**
   * Stop the server when this process exits, however it dies (even `kill -9`),
   * and keep it out of this process' group (a terminal's Ctrl-C reaches the
   * service, which stops it after the calls in flight). `child` is then a
   * `/bin/sh` wrapper, not redis-server itself. Default false.
   */
  exitWithParent?: boolean;
}

export interface RedisServerProcess {
  /** How to reach it: a redis:// URL or a socket path. */
  readonly location: { url: string } | { path: string };
  readonly port: number | "unix";
  readonly child: ChildProcess;
  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * The `exitWithParent` wrapper, run as `sh -c WRAPPER binary args...`. The
 * parent holds the write end of its stdin and never writes: end of file means
 * the parent closed it (stop) or exited, and the server then gets SIGTERM,
 * which flushes the AOF and removes the socket and pidfile. A pipe is
 * portable and fires whatever kills the parent; Linux's PR_SET_PDEATHSIG
 * (`setpriv --pdeathsig`) would need a fallback elsewhere. The watcher is a
 * subshell of builtins only, so killing it leaves no process behind.
 */
const EXIT_WITH_PARENT = `exec 3<&0
"$0" "$@" </dev/null 3<&- &
server=$!
(while read -r _ <&3; do :; done; kill -TERM "$server" 2>/dev/null) &
watcher=$!
exec 3<&-
wait "$server"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"`;

// What sh exits with when it cannot find the command.
const COMMAND_NOT_FOUND = 127;

// A broken pipe to or from a dying server must never crash the service; its exit is what counts.
const ignore = (): void => {};

/** Thrown when no `redis-server` binary can be run. */
export class RedisBinaryMissingError extends Error {
  override readonly name = "RedisBinaryMissingError";
}

/**
 * Runs a private `redis-server` child: used for the embedded default of
 * `npm start` and by the tests, which must never touch a shared Redis.
 */
export function startRedisServerProcess(
  opts: RedisServerProcessOptions,
): Promise<RedisServerProcess> {
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  const socket = join(opts.dir, "redis.sock");
  const listenArgs =
    opts.port === "unix"
      ? ["--port", "0", "--unixsocket", socket, "--unixsocketperm", "700"]
      : ["--port", String(opts.port), "--bind", "127.0.0.1"];
  const args = [
    ...(opts.configFile === undefined ? [] : [opts.configFile]),
    "--dir",
    opts.dir,
    ...listenArgs,
    "--save",
    "",
    "--appendonly",
    opts.appendOnly === true ? "yes" : "no",
    "--maxmemory-policy",
    "noeviction",
    ...(opts.extraArgs ?? []),
  ];
  const binary = opts.binary ?? "redis-server";
  const child =
    opts.exitWithParent === true
      ? spawn("/bin/sh", ["-c", EXIT_WITH_PARENT, binary, ...args], {
          stdio: ["pipe", "pipe", "pipe"],
          detached: true,
        })
      : spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.on("error", ignore);
  child.stdin?.on("error", ignore);
  child.stdout?.on("error", ignore);
  child.stderr?.on("error", ignore);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const location =
    opts.port === "unix" ? { path: socket } : { url: `redis://127.0.0.1:${opts.port}` };

  const kill = (signal: NodeJS.Signals): void => {
    if (opts.exitWithParent === true && child.pid !== undefined) {
      // The wrapper leads its own group: the server and the watcher go with it.
      try {
        process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    } else {
      child.kill(signal);
    }
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) {
      return;
    }
    if (opts.exitWithParent === true) {
      child.stdin?.end();
    } else {
      child.kill("SIGTERM");
    }
    // Rewriting a large AOF can take a while; SIGKILL only when it hangs.
    const timer = setTimeout(() => kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };

  return new Promise((resolve, reject) => {
    // The tail of the output, for the error message if it fails to start.
    let output = "";
    const timer = setTimeout(() => {
      void stop();
      reject(
        new Error(
          `redis-server did not start within ${opts.startTimeoutMs ?? 10_000} ms: ${output}`,
        ),
      );
    }, opts.startTimeoutMs ?? 10_000);
    const drain = () => {
      // From now on the output is read and dropped, so a full pipe never blocks the server.
      for (const stream of [child.stdout, child.stderr]) {
        stream?.removeAllListeners("data");
        stream?.resume();
      }
    };
    child.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        err.code === "ENOENT"
          ? new RedisBinaryMissingError("redis-server was not found on PATH", { cause: err })
          : err,
      );
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      drain();
      reject(
        code === COMMAND_NOT_FOUND && opts.exitWithParent === true
          ? new RedisBinaryMissingError(`${binary} was not found on PATH`)
          : new Error(`redis-server exited with code ${code}: ${output.slice(-2000)}`),
      );
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
      if ((opts.readyPattern ?? /ready to accept connections/i).test(output)) {
        clearTimeout(timer);
        drain();
        resolve({ location, port: opts.port, child, stop });
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
    });
  });
}
