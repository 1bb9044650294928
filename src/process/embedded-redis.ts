// The embedded default of `npm start` without a configured Redis, and its
// data folder: the instance lock a start takes on the folder (its Redis
// belongs to the one service instance holding it), a redis-server an earlier
// run left serving the folder (stopped only when proven an orphan), and the
// redis-server child that keeps its data there. Only whole starts show the
// server serving, keeping its data and stopping with the service, and only
// real orphaned servers show what a start stops and what it leaves alone.
// Tested by test/integration/start.test.ts, test/integration/redis-persistence.test.ts,
// test/integration/second-start.test.ts.

import { execFileSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { join, resolve } from "node:path";
import {
  RedisBinaryMissingError,
  type RedisServerProcess,
  startRedisServerProcess,
} from "../redis/redis-server-process.js";

// Pid files and processes: what the lock and the search for an orphan read.

/** The process id a pid file holds; undefined when it holds none (missing, unreadable, not a positive integer). */
export function pidInFile(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a live process (EPERM: alive, but another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

// The data folder's instance lock.

/** The lock's name in the embedded data folder: the owner's pid, for people (liveness is the socket's). */
export const LOCK_FILE = "service.lock";
/** The lock itself: a Unix socket file in the data folder, listened on by the owner. */
export const LOCK_SOCKET_FILE = "service.lock.sock";

// sun_path holds 108 bytes on Linux, 104 on macOS, the terminating NUL included.
const MAX_LOCK_SOCKET_PATH = 103;

export interface InstanceLockOptions {
  /** The embedded data folder; created when missing. */
  dir: string;
}

/** The folder's lock: held by this process, or by another live process (its pid when it said it). */
export type InstanceLock =
  | {
      held: true;
      path: string;
      /** Whether the folder's lock socket is still this process's (another start cannot have replaced it). */
      stillHeld(): boolean;
      release(): void;
    }
  | { held: false; path: string; ownerPid: number | undefined };

/** Listens on the lock's socket: true when bound, false when a socket file is there already. */
function bind(server: Server, address: string): Promise<boolean> {
  return new Promise((done, fail) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      if (err.code === "EADDRINUSE") {
        done(false);
      } else {
        fail(err);
      }
    };
    const onListening = () => {
      server.off("error", onError);
      done(true);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen({ path: address, exclusive: true });
  });
}

/**
 * Asks the lock's owner its pid: "gone" when nothing listens any more (a
 * socket file left by a crash), undefined when it did not say in time.
 */
function ownerOf(address: string): Promise<number | "gone" | undefined> {
  return new Promise((done) => {
    let text = "";
    const socket = connect({ path: address });
    const timer = setTimeout(() => {
      socket.destroy();
      done(undefined);
    }, 2000);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done(err.code === "ECONNREFUSED" || err.code === "ENOENT" ? "gone" : undefined);
    });
    socket.on("end", () => {
      clearTimeout(timer);
      const pid = Number(text.trim());
      done(Number.isSafeInteger(pid) && pid > 0 ? pid : undefined);
    });
  });
}

/** The inode at `path` (not followed), undefined when nothing is there. */
function inodeAt(path: string): number | undefined {
  try {
    return lstatSync(path).ino;
  } catch {
    return undefined;
  }
}

/**
 * Removes a dead owner's socket (or a file put there, which refuses
 * connections too) from `file`, and never a live one. The remover first
 * claims it with a hard link of a fixed name, which only one start at a time
 * can make; while the claim exists nobody else removes `file` and nobody can
 * bind there, so the socket asked through the claim (refused: dead) is the
 * one removed. Inode numbers are reused at once, so they identify nothing. A
 * claim left by a start that died while clearing is taken back after 10 s.
 */
async function removeDeadSocket(dir: string, file: string): Promise<void> {
  const claim = join(dir, `.${LOCK_SOCKET_FILE}.clearing`);
  try {
    linkSync(file, claim);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      try {
        if (Date.now() - lstatSync(claim).ctimeMs > 10_000) {
          rmSync(claim, { force: true });
        }
      } catch {
        // Cleared meanwhile.
      }
      await new Promise((done) => setTimeout(done, 50));
    }
    return; // Another start is clearing it, or it is gone already.
  }
  try {
    if ((await ownerOf(claim)) === "gone") {
      rmSync(file, { force: true });
    }
  } finally {
    rmSync(claim, { force: true });
  }
}

/**
 * The path to bind the lock's socket through: sun_path is short, so on Linux
 * the folder is reached through an open descriptor of it (/proc/self/fd/N,
 * whatever the folder's path length); elsewhere the socket's own path.
 */
function addressIn(dir: string): { address: string; close(): void } {
  if (process.platform === "linux") {
    const fd = openSync(dir, "r");
    return { address: `/proc/self/fd/${fd}/${LOCK_SOCKET_FILE}`, close: () => closeSync(fd) };
  }
  const address = join(dir, LOCK_SOCKET_FILE);
  if (Buffer.byteLength(address) > MAX_LOCK_SOCKET_PATH) {
    throw new Error(
      `the data folder's path is too long for its lock socket ${address}; choose a shorter EMBEDDED_REDIS_DIR`,
    );
  }
  return { address, close: () => {} };
}

/**
 * Takes the lock of an embedded data folder for this process's whole life,
 * unless another process holds it. The lock is a Unix socket file in the
 * folder that this process listens on: a property of the folder itself, so
 * every path to it (symlinks, bind mounts) and every node version finds the
 * same one, and only who may write in the folder can make one (the abstract
 * socket namespace used before had no permissions, and node 20 and 24 bound
 * its names differently). Binding is atomic, so of two racing starts exactly
 * one wins; the owner's liveness is the socket's (a connection is accepted),
 * so a pid reused by another program or a lock file edited by hand fools
 * nothing. A dead owner's socket refuses connections and is replaced. The
 * owner answers each connection with its pid, which names it in the caller's
 * message; `service.lock` in the folder holds it too, for people.
 */
export async function acquireInstanceLock(opts: InstanceLockOptions): Promise<InstanceLock> {
  const dir = resolve(opts.dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, LOCK_FILE);
  const file = join(dir, LOCK_SOCKET_FILE);
  const { address, close } = addressIn(dir);
  // Rounds: each takes the lock, finds its owner alive, or clears (or waits while another
  // start clears) a dead owner's socket.
  for (let round = 0; round < 20; round++) {
    const server = createServer((socket) => socket.end(`${process.pid}\n`));
    if (await bind(server, address)) {
      // The lock must not keep the process alive; it lasts as long as the process.
      server.unref();
      const inode = inodeAt(file);
      writeFileSync(path, `${process.pid}\n`, { mode: 0o600 });
      const stillHeld = () => inode !== undefined && inodeAt(file) === inode;
      let released = false;
      return {
        held: true,
        path,
        stillHeld,
        release() {
          if (released) {
            return;
          }
          released = true;
          if (stillHeld()) {
            rmSync(file, { force: true });
          }
          server.close();
          close();
          if (pidInFile(path) === process.pid) {
            rmSync(path, { force: true });
          }
        },
      };
    }
    const owner = await ownerOf(address);
    if (owner !== "gone") {
      close();
      return { held: false, path, ownerPid: owner ?? pidInFile(path) };
    }
    await removeDeadSocket(dir, file);
  }
  close();
  throw new Error(`could not take the lock of ${dir}`);
}

// A redis-server an earlier run left on the folder.

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

// The embedded redis-server.

// Unix socket paths are limited to about 107 bytes.
const MAX_REDIS_SOCKET_PATH = 100;

/** Thrown when the embedded default cannot run; the message says what to do. */
export class EmbeddedRedisError extends Error {
  override readonly name = "EmbeddedRedisError";
}

export interface EmbeddedRedis {
  server: RedisServerProcess;
  /** A server an earlier run left on the same folder, stopped before this one started. */
  stale: StaleRedis;
}

/**
 * The embedded default of `npm start` without a configured Redis: a private
 * redis-server child keeping its data (AOF) in `dir`, on a unix socket there
 * (or a free local port when the path is too long for a socket). It exits
 * with this process, and a server an earlier run left on `dir` is stopped
 * first, only when proven an orphan (stopStaleRedis): `lockHeld` says this
 * process still holds the folder's instance lock.
 */
export async function startEmbeddedRedis(
  dir: string,
  freePort: () => Promise<number>,
  lockHeld: () => boolean,
): Promise<EmbeddedRedis> {
  const absolute = resolve(dir);
  const socket = join(absolute, "redis.sock");
  const pidFile = join(absolute, "redis.pid");
  try {
    const stale = await stopStaleRedis({ dir: absolute, socket, pidFile, lockHeld });
    const server = await startRedisServerProcess({
      dir: absolute,
      port: socket.length < MAX_REDIS_SOCKET_PATH ? "unix" : await freePort(),
      appendOnly: true,
      extraArgs: ["--pidfile", pidFile],
      exitWithParent: true,
    });
    return { server, stale };
  } catch (err) {
    if (err instanceof StaleRedisError) {
      throw new EmbeddedRedisError(
        `${err.message}; stop it (or the other service), then start again.`,
        { cause: err },
      );
    }
    if (err instanceof RedisBinaryMissingError) {
      throw new EmbeddedRedisError(
        "No redis-server binary on PATH. Install one (e.g. `apt-get install redis-server`, " +
          "`brew install redis`) or set REDIS_URL to a running Redis.",
        { cause: err },
      );
    }
    throw err;
  }
}
