import {
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { commandOf, isAlive } from "./process-probe.js";

/** The lock's name in the embedded data folder. */
export const LOCK_FILE = "service.lock";

export interface InstanceLockOptions {
  /** The embedded data folder; created when missing. */
  dir: string;
  /** The pid written in the lock. Default this process's. */
  pid?: number;
}

/** The folder's lock: held by this process, or by another live service process. */
export type InstanceLock =
  | { held: true; path: string; release(): void }
  | { held: false; path: string; ownerPid: number };

/**
 * Whether the pid in a lock still owns it: alive and running what this
 * process runs (pids are reused; a reused pid of another kind of program is a
 * lock left by a crash). When in doubt (the name cannot be read), it owns it:
 * taking a live instance's Redis is the harm this lock prevents.
 */
function ownsLock(pid: number): boolean {
  if (!isAlive(pid)) {
    return false;
  }
  const theirs = commandOf(pid);
  return theirs === undefined || theirs === commandOf(process.pid);
}

function pidIn(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock file of an embedded data folder for this process, unless a
 * live service process holds it. A lock whose pid is dead (a `kill -9`, a
 * crash) is stale and taken over. Atomic between starts: the lock appears by
 * link(2), which fails when it exists, and a stale one is first renamed away,
 * so two starts that both judged it stale cannot both take it.
 */
export function acquireInstanceLock(opts: InstanceLockOptions): InstanceLock {
  const dir = resolve(opts.dir);
  const pid = opts.pid ?? process.pid;
  const path = join(dir, LOCK_FILE);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mine = join(dir, `${LOCK_FILE}.${pid}`);
  writeFileSync(mine, `${pid}\n`, { mode: 0o600 });
  try {
    // Few rounds: each one either takes the lock, finds its owner alive, or removes a stale one.
    for (let round = 0; round < 5; round++) {
      try {
        linkSync(mine, path);
        let released = false;
        return {
          held: true,
          path,
          release() {
            // Only our own: a lock another start took over after a crash is theirs.
            if (!released && pidIn(path) === pid) {
              rmSync(path, { force: true });
            }
            released = true;
          },
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
          throw err;
        }
      }
      const owner = pidIn(path);
      if (owner !== undefined && owner !== pid && ownsLock(owner)) {
        return { held: false, path, ownerPid: owner };
      }
      const moved = join(dir, `${LOCK_FILE}.${pid}.stale`);
      try {
        renameSync(path, moved);
      } catch {
        continue; // Gone already: another start removed it.
      }
      const movedOwner = pidIn(moved);
      if (movedOwner !== undefined && movedOwner !== pid && ownsLock(movedOwner)) {
        // Another start took it between our look and the rename: give it back.
        try {
          linkSync(moved, path);
        } catch {
          // A third start holds it now; the next round finds out whose it is.
        }
      }
      rmSync(moved, { force: true });
    }
    throw new Error(`could not take the lock ${path}`);
  } finally {
    try {
      unlinkSync(mine);
    } catch {
      // Already gone.
    }
  }
}
