// The frame of a dist/ build, shared by this package's (scripts/build.mjs) and
// the service's (../scripts/build.mjs): tsc into a folder beside dist/, the
// build's own steps there, then swapped in whole.
import { execFileSync } from "node:child_process";
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isStale, resolveTool } from "./build-freshness.mjs";

/** What every dist/ is made from, relative to its root: the sources, the compiler's settings, the build. */
const BUILD_INPUTS = ["src", "tsconfig.json", "tsconfig.build.json", "scripts/build.mjs"];

/**
 * Builds `root`/dist/ with `tsc -p tsconfig.build.json`, then `steps(esbuild,
 * out)` on the new folder, and writes `dist/.built` last (its mtime is when
 * dist/ was complete). With `--if-stale` on the command line, only when one
 * of BUILD_INPUTS or `inputs` (relative to `root`) changed since. Without
 * TypeScript (`npm ci --omit=dev`) a dist/ that has `keptFile` is kept as it
 * is. Failures set process.exitCode and leave dist/ as it was.
 *
 * @param {{
 *   root: string,
 *   inputs: readonly string[],
 *   keptFile: string,
 *   log: (message: string) => void,
 *   steps: (esbuild: typeof import("esbuild"), out: string) => Promise<void>,
 * }} build
 */
export async function buildDist({ root, inputs, keptFile, log, steps }) {
  const dist = join(root, "dist");
  const stamp = join(dist, ".built");
  if (process.argv.includes("--if-stale") && !isStale(stamp, root, [...BUILD_INPUTS, ...inputs])) {
    return;
  }
  const started = performance.now();
  const tsc = resolveTool("typescript/bin/tsc");
  if (tsc === undefined) {
    // `npm ci --omit=dev`: no compiler. A dist/ copied from a build stage still runs.
    if (existsSync(join(dist, keptFile))) {
      log("TypeScript is not installed (--omit=dev?): keeping the existing dist/");
      return;
    }
    log("TypeScript is not installed (--omit=dev?), so dist/ cannot be built:");
    log("install the dev dependencies (npm ci) or copy dist/ from a build stage");
    // Fails a build that something runs on (`--if-stale`: prestart, prepack),
    // not `npm ci --omit=dev` (prepare).
    process.exitCode = process.argv.includes("--if-stale") ? 1 : 0;
    return;
  }
  const esbuild = await import("esbuild");
  // Built beside dist/ and swapped in whole: nothing reading dist/ meanwhile
  // (a service started meanwhile) sees half a build, and files of deleted
  // sources do not linger.
  const out = join(root, `.dist-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  try {
    try {
      execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", out], {
        cwd: root,
        stdio: "inherit",
      });
    } catch {
      // tsc printed the errors; its stack trace would only bury them.
      log("tsc failed: dist/ left as it was");
      process.exitCode = 1;
      return;
    }
    await steps(esbuild, out);
    rmSync(dist, { recursive: true, force: true });
    renameSync(out, dist);
    writeFileSync(stamp, `${new Date().toISOString()}\n`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  log(`dist/ built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
