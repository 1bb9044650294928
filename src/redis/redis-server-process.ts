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
}

export interface RedisServerProcess {
  /** How to reach it: a redis:// URL or a socket path. */
  readonly location: { url: string } | { path: string };
  readonly port: number | "unix";
  readonly child: ChildProcess;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  stop(): Promise<void>;
}

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
  const child = spawn(opts.binary ?? "redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const location =
    opts.port === "unix" ? { path: socket } : { url: `redis://127.0.0.1:${opts.port}` };

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) {
      return;
    }
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };

  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => {
      void stop();
      reject(
        new Error(
          `redis-server did not start within ${opts.startTimeoutMs ?? 10_000} ms: ${output}`,
        ),
      );
    }, opts.startTimeoutMs ?? 10_000);
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
      reject(new Error(`redis-server exited with code ${code}: ${output.slice(-2000)}`));
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if ((opts.readyPattern ?? /ready to accept connections/i).test(output)) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners("data");
        child.stdout?.resume();
        resolve({ location, port: opts.port, child, stop });
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
  });
}
