import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join, posix } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * Issue 41: the service's hand-written sources stay few enough to read, a
 * file with one user folded into it. Counted: every `.ts`, `.mjs` and `.lua`
 * file of src/, but the generated code (src/gen/) and the console page
 * (src/console/, a bundle of its own).
 */
const MOST_FILES = 150;
const NOT_COUNTED = new Set(["src/gen", "src/console"]);

function sourcesUnder(dir: string): string[] {
  if (NOT_COUNTED.has(dir)) {
    return [];
  }
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) {
      return sourcesUnder(path);
    }
    return /\.(?:ts|mjs|lua)$/.test(entry.name) ? [path] : [];
  });
}

describe("the service's sources", () => {
  it(`are at most ${MOST_FILES} hand-written files`, () => {
    const files = sourcesUnder("src");
    assert.ok(files.length > 100, `too few files read: ${files.length}`);
    assert.ok(files.includes("src/store/lua/create-token.lua"), "Lua scripts are counted");
    assert.ok(!files.some((f) => f.startsWith("src/gen/")), "generated code is not");
    assert.ok(
      files.length <= MOST_FILES,
      `${files.length} files in src/: fold a file with one user into it`,
    );
  });
});
