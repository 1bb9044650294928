import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A suite's temp folders (real paths, named `prefix…`): `make` one, `removeAll` at the end. */
export function tempDirs(prefix: string): { make: () => string; removeAll: () => void } {
  const dirs: string[] = [];
  return {
    make: () => {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
      dirs.push(dir);
      return dir;
    },
    removeAll: () => {
      for (const dir of dirs.splice(0)) {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
