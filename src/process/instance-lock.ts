import {
  closeSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { join, resolve } from "node:path";
import { pidInFile } from "./pid-file.js";

/** The lock's name in the embedded data folder: the owner's pid, for people (liveness is the socket's). */
export const LOCK_FILE = "service.lock";
/** The lock itself: a Unix socket file in the data folder, listened on by the owner. */
export const LOCK_SOCKET_FILE = "service.lock.sock";

// sun_path holds 108 bytes on Linux, 104 on macOS, the terminating NUL included.
const MAX_SOCKET_PATH = 103;

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
  if (Buffer.byteLength(address) > MAX_SOCKET_PATH) {
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
