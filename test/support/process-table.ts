import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** Whether `pid` runs (a zombie, dead but not yet reaped, does not). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // The state follows the parenthesised command name in /proc/<pid>/stat.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * The pids of the redis-server processes working in `dir` (redis-server
 * changes to its --dir), found in /proc: whoever started them, whatever they
 * listen on.
 */
export function redisServersIn(dir: string): number[] {
  return pidsWhere(
    (pid) =>
      readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "redis-server" &&
      readlinkSync(`/proc/${pid}/cwd`) === dir &&
      isRunning(pid),
  );
}

/** The pids in /proc for which `matches` holds; one that exits while it looks (it throws) does not. */
export function pidsWhere(matches: (pid: number) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      if (matches(Number(entry))) {
        pids.push(Number(entry));
      }
    } catch {
      // Exited while we looked, or not ours to read.
    }
  }
  return pids;
}

/** Waits until `check` holds, or throws `message` after `timeoutMs`. */
export async function waitUntil(
  check: () => boolean,
  message: () => string,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`${message()} after ${timeoutMs} ms`);
    }
    await new Promise((done) => setTimeout(done, 50));
  }
}
