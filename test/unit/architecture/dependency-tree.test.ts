import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";

const ROOT = join(import.meta.dirname, "..", "..", "..");

// An invalid peer dependency in package-lock.json is what makes `npm ci` print
// ERESOLVE warnings (issue 36): a clean install prints none.
describe("package-lock.json", () => {
  it("resolves every dependency and peer dependency validly (npm ls --all exits 0)", () => {
    const run = spawnSync("npm", ["ls", "--all", "--package-lock-only"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    assert.equal(run.error, undefined);
    assert.equal(run.status, 0, run.stderr);
  });
});
