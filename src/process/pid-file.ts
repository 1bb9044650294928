import { readFileSync } from "node:fs";

/** The process id a pid file holds; undefined when it holds none (missing, unreadable, not a positive integer). */
export function pidInFile(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
