import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

/** Whether `pid` is a live process (EPERM: alive, but another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The command name of `pid` ("node", "redis-server"), from /proc where there
 * is one, else from `ps`; undefined when it cannot be read.
 */
export function commandOf(pid: number): string | undefined {
  try {
    if (existsSync("/proc/self/comm")) {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    }
    const name = execFileSync("ps", ["-o", "comm=", "-p", String(pid)], { encoding: "utf8" });
    return name.trim().split("/").pop();
  } catch {
    return undefined;
  }
}
