import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
let checked = false;

/**
 * Rebuilds dist/ if src/ changed since the last build, once per test
 * process: `npm start`, the perps-tokens bin and the package run compiled
 * code, and a test must never run a stale build of the code it tests.
 */
export function buildIfStale(): void {
  if (checked) {
    return;
  }
  execFileSync(process.execPath, [join(ROOT, "scripts/build.mjs"), "--if-stale"], {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
  });
  checked = true;
}
