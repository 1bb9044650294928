// A start's look for a redis-server an earlier run left on its data folder:
// only real orphaned servers show what it stops and what it leaves alone.
// Tested by test/integration/start.test.ts.

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
  /**
   * Whether this process still holds the folder's instance lock: a server of
   * the folder is an orphan only while nobody else does.
   */
  lockHeld: () => boolean;
  /** How long a stale server may take to stop. Default 10000 ms. */
  timeoutMs?: number;
}

/** The orphan `stopStaleRedis` stopped (`redisPid`, not `pid`: that is the log's). */
export type StaleRedis = { via: "pidfile"; redisPid: number } | undefined;

/** Thrown when a server on the folder is not proven an orphan, or does not stop in time. */
export class StaleRedisError extends Error {
  override readonly name = "StaleRedisError";
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Whether a Redis answers PING on `socket` within a second. */
function answersOn(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const conn = connect({ path: socket });
    const finish = (answered: boolean) => {
      clearTimeout(timer);
      conn.destroy();
      resolve(answered);
    };
    const timer = setTimeout(() => finish(false), 1000);
    let reply = "";
    conn.on("error", () => finish(false));
    conn.on("connect", () => conn.write("PING\r\n"));
    conn.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) {
        finish(reply.startsWith("+PONG") || reply.startsWith("-NOAUTH"));
      }
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
 * Stops a redis-server that an earlier run left serving `dir` (its service
 * was killed together with the wrapper that stops it), before this start runs
 * its own: two servers on one folder write one AOF and delete each other's
 * socket. Only a proven orphan is stopped, gracefully (SIGTERM: it flushes
 * its AOF): the live redis-server named by the folder's own pidfile, working
 * in `dir`, while this process holds the folder's lock (so no live service
 * owns it). Any other server answering on the folder's socket is left alone,
 * and the start refuses (StaleRedisError), saying so.
 */
export async function stopStaleRedis(opts: StaleRedisOptions): Promise<StaleRedis> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  if (!opts.lockHeld()) {
    throw new StaleRedisError(`another start took the lock of ${opts.dir} meanwhile`);
  }
  let stopped: StaleRedis;
  const pid = pidInFile(opts.pidFile);
  // Pid 1 is init, never a redis-server of ours.
  if (pid !== undefined && pid !== 1 && isAlive(pid) && isRedisOf(pid, opts.dir)) {
    process.kill(pid, "SIGTERM");
    const deadline = Date.now() + timeoutMs;
    while (isAlive(pid)) {
      if (Date.now() > deadline) {
        throw new StaleRedisError(`redis-server pid ${pid} of ${opts.dir} did not stop on SIGTERM`);
      }
      await sleep(50);
    }
    stopped = { via: "pidfile", redisPid: pid };
  }
  if (existsSync(opts.socket) && (await answersOn(opts.socket))) {
    throw new StaleRedisError(
      `a redis-server that this service did not start (no pidfile of its own in the folder) answers on ${opts.socket}`,
    );
  }
  return stopped;
}
