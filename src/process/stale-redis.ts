import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { connect } from "node:net";
import { pidInFile } from "./pid-file.js";
import { isAlive } from "./process-probe.js";

export interface StaleRedisOptions {
  /** The embedded data folder (absolute). */
  dir: string;
  /** The unix socket the embedded server listens on in `dir`. */
  socket: string;
  /** The pidfile the embedded server writes in `dir`. */
  pidFile: string;
  /** How long a stale server may take to stop. Default 10000 ms. */
  timeoutMs?: number;
}

/** How `stopStaleRedis` found the server it stopped (`redisPid`, not `pid`: that is the log's). */
export type StaleRedis = { via: "socket" } | { via: "pidfile"; redisPid: number } | undefined;

/** Thrown when a stale server of the folder does not stop in time. */
export class StaleRedisError extends Error {
  override readonly name = "StaleRedisError";
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Asks the server on `socket` to SHUTDOWN (it flushes its AOF and removes its
 * socket). Resolves false when nothing answers PING there, true once the
 * server closed the connection on its way out.
 */
function shutdownThroughSocket(socket: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let answered = false;
    let reply = "";
    const conn = connect({ path: socket });
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new StaleRedisError(`the redis-server on ${socket} did not shut down`));
    }, timeoutMs);
    conn.on("error", () => {
      // ENOENT or ECONNREFUSED: no server (a socket file left by a crash is replaced on start).
      clearTimeout(timer);
      resolve(answered);
    });
    conn.on("connect", () => conn.write("PING\r\n"));
    conn.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      if (!answered && reply.startsWith("+PONG\r\n")) {
        answered = true;
        reply = "";
        conn.write("SHUTDOWN\r\n");
      } else if (reply.includes("\r\n")) {
        clearTimeout(timer);
        conn.destroy();
        reject(
          new StaleRedisError(`the server on ${socket} refused to shut down: ${reply.trim()}`),
        );
      }
    });
    conn.on("close", () => {
      clearTimeout(timer);
      resolve(answered);
    });
  });
}

/**
 * Whether `pid` is a redis-server working in `dir` (redis-server changes to
 * its --dir): pids are reused, and a Redis of another folder must never be
 * touched. Where /proc is missing, the process name is all there is to check.
 */
function isRedisOf(pid: number, dir: string): boolean {
  try {
    if (existsSync("/proc/self/cwd")) {
      return (
        readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "redis-server" &&
        readlinkSync(`/proc/${pid}/cwd`) === realpathSync(dir)
      );
    }
    const name = execFileSync("ps", ["-o", "comm=", "-p", String(pid)], { encoding: "utf8" });
    return name.trim().endsWith("redis-server");
  } catch {
    return false;
  }
}

/**
 * Stops a redis-server that an earlier run left serving `dir` (its parent was
 * killed together with the wrapper that stops it, or it predates that
 * wrapper): two servers on one folder write one AOF and delete each other's
 * socket. Only a server of `dir` is stopped, gracefully: the one answering on
 * the socket in `dir` (SHUTDOWN), else the live redis-server named by the
 * pidfile in `dir` whose working folder is `dir` (SIGTERM).
 */
export async function stopStaleRedis(opts: StaleRedisOptions): Promise<StaleRedis> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  if (existsSync(opts.socket) && (await shutdownThroughSocket(opts.socket, timeoutMs))) {
    return { via: "socket" };
  }
  const pid = pidInFile(opts.pidFile);
  // Pid 1 is init, never a redis-server of ours.
  if (pid === undefined || pid === 1 || !isAlive(pid) || !isRedisOf(pid, opts.dir)) {
    return undefined;
  }
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      throw new StaleRedisError(`redis-server pid ${pid} of ${opts.dir} did not stop on SIGTERM`);
    }
    await sleep(50);
  }
  return { via: "pidfile", redisPid: pid };
}
