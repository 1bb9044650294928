// Whether a build is older than its inputs, and where a build tool is: shared
// by this package's build and the service's (scripts/build.mjs), which runs
// this one first.
import { readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);

/** Newest mtime under `path`; folders count too, so a deleted or renamed file shows. */
export function newestMtime(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) {
    return 0;
  }
  let newest = stat.mtimeMs;
  if (stat.isDirectory()) {
    for (const entry of readdirSync(path)) {
      newest = Math.max(newest, newestMtime(join(path, entry)));
    }
  }
  return newest;
}

/** True when `stamp` is missing or any of `inputs` (relative to `root`) changed after it. */
export function isStale(stamp, root, inputs) {
  const built = statSync(stamp, { throwIfNoEntry: false });
  return (
    built === undefined || inputs.some((input) => newestMtime(join(root, input)) > built.mtimeMs)
  );
}

/** The path of an installed tool, or undefined where it is not installed (--omit=dev). */
export function resolveTool(specifier) {
  try {
    return require.resolve(specifier);
  } catch {
    return undefined;
  }
}
