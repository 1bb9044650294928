import { createHash } from "node:crypto";
import { mkdirSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { join, resolve } from "node:path";
import { pidInFile } from "./pid-file.js";

/** The lock's name in the embedded data folder: the owner's pid, for people (liveness is the socket's). */
export const LOCK_FILE = "service.lock";
/** Where the lock's socket is on systems without Linux's abstract socket namespace. */
const SOCKET_FILE = "service.lock.sock";

export interface InstanceLockOptions {
  /** The embedded data folder; created when missing. */
  dir: string;
}

/** The folder's lock: held by this process, or by another live process (its pid when it said it). */
export type InstanceLock =
  | { held: true; path: string; release(): void }
  | { held: false; path: string; ownerPid: number | undefined };

/**
 * The socket that is the lock of a data folder. On Linux, a name in the
 * abstract namespace derived from the folder's real path: nothing on disk,
 * and the kernel frees it the moment its owner dies, `kill -9` included.
 * Elsewhere, a socket file in the folder.
 */
export function lockSocketOf(realDir: string): { address: string; abstract: boolean } {
  if (process.platform === "linux") {
    const hash = createHash("sha256").update(realDir).digest("hex").slice(0, 40);
    return { address: `\0perps-token-service/${hash}`, abstract: true };
  }
  return { address: join(realDir, SOCKET_FILE), abstract: false };
}

/** Listens on the lock's socket: true when bound, false when another process is bound to it. */
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

/**
 * Takes the lock of an embedded data folder for this process's whole life,
 * unless another process holds it. The lock is a socket this process listens
 * on (lockSocketOf): binding is atomic, so of two racing starts exactly one
 * wins; the owner's liveness is the socket's, so a pid reused by another
 * program, an owner started as `nodejs` or with another `process.title`, or
 * a lock file edited by hand fool nothing; a dead owner's socket is free
 * (Linux) or refuses connections and is replaced. The owner answers each
 * connection with its pid, which names it in the caller's message.
 * `service.lock` in the folder holds the owner's pid, for people.
 */
export async function acquireInstanceLock(opts: InstanceLockOptions): Promise<InstanceLock> {
  const dir = resolve(opts.dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, LOCK_FILE);
  const { address, abstract } = lockSocketOf(realpathSync(dir));
  // Few rounds: each one takes the lock, finds its owner alive, or clears a dead one's socket file.
  for (let round = 0; round < 3; round++) {
    const server = createServer((socket) => socket.end(`${process.pid}\n`));
    if (await bind(server, address)) {
      // The lock must not keep the process alive; it lasts as long as the process.
      server.unref();
      writeFileSync(path, `${process.pid}\n`, { mode: 0o600 });
      let released = false;
      return {
        held: true,
        path,
        release() {
          if (released) {
            return;
          }
          released = true;
          server.close();
          if (pidInFile(path) === process.pid) {
            rmSync(path, { force: true });
          }
        },
      };
    }
    const owner = await ownerOf(address);
    if (owner !== "gone") {
      return { held: false, path, ownerPid: owner ?? pidInFile(path) };
    }
    if (!abstract) {
      try {
        unlinkSync(address);
      } catch {
        // Another start cleared it first.
      }
    }
  }
  throw new Error(`could not take the lock of ${dir}`);
}
