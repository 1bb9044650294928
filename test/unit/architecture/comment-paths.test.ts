import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { sourceComments } from "../../support/source-comments.js";
import { tempDirs } from "../../support/temp-dirs.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Where the sources whose comments are read live (generated code aside). */
const SOURCE_DIRS = ["src", "client/src", "test", "bench", "scripts"];

/**
 * A repository path: one of the repository's top folders, then a file with
 * its extension. Not one inside another path (`../shared/…`, `node_modules/…`).
 */
const REPOSITORY_PATH =
  /(?<![\w./@-])((?:src|client|test|bench|scripts|docs|proto)\/[\w./-]*\w\.(?:ts|mjs|js|lua|md|proto|json|yaml|yml|sh|svg|css|html))(?![\w/-])/g;

/** A file named without its folder (`app.ts`); not a glob's tail (`*-suite.ts`). */
const FILE_NAME = /(?<![\w./@*-])([\w-]+(?:\.[\w-]+)*\.(?:ts|mjs|lua|md|proto))(?![\w/-])/g;

/**
 * Files comments name that are not the repository's: google/protobuf's
 * descriptor.proto (in node_modules) and the team's shared spec, token-api.md.
 */
const OUTSIDE_FILES = new Set(["descriptor.proto", "token-api.md"]);

/** Folders that hold no file a comment should name. */
const SKIPPED = new Set(["node_modules", "dist", "tmp", "test-output"]);

/** Every file under `dir`, relative to `root`, skipping dependencies, build output and dot-folders. */
function filesUnder(root: string, dir: string): string[] {
  if (!existsSync(join(root, dir))) {
    return [];
  }
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return SKIPPED.has(entry.name) || entry.name.startsWith(".") ? [] : filesUnder(root, path);
    }
    return [path];
  });
}

/** The text of every comment of a TypeScript/JavaScript or Lua source. */
function commentsOf(file: string, text: string): string[] {
  if (file.endsWith(".lua")) {
    return [...text.matchAll(/--[^\n]*/g)].map((m) => m[0]);
  }
  return sourceComments(file, text).map((comment) => comment.text);
}

/** What the comments of the repository at `root` name, and which of those do not exist. */
function commentNames(root: string): { named: number; missing: string[] } {
  const everyFile = filesUnder(root, ".");
  const fileNames = new Set(everyFile.map((file) => file.slice(file.lastIndexOf("/") + 1)));
  // A path in a .js import is the .ts source's.
  const exists = (path: string) =>
    existsSync(join(root, path)) || existsSync(join(root, path.replace(/\.js$/, ".ts")));
  const sources = SOURCE_DIRS.flatMap((dir) => filesUnder(root, dir)).filter(
    (file) => /\.(ts|mjs|lua)$/.test(file) && !file.split("/").includes("gen"),
  );
  let named = 0;
  const missing: string[] = [];
  for (const file of sources) {
    for (const comment of commentsOf(file, readFileSync(join(root, file), "utf8"))) {
      for (const [, path = ""] of comment.matchAll(REPOSITORY_PATH)) {
        named += 1;
        // The client package's comments may name its own files from its folder.
        if (!exists(path) && !(file.startsWith("client/") && exists(join("client", path)))) {
          missing.push(`${file}: ${path}`);
        }
      }
      for (const [, name = ""] of comment.matchAll(FILE_NAME)) {
        named += 1;
        if (!fileNames.has(name) && !OUTSIDE_FILES.has(name)) {
          missing.push(`${file}: ${name}`);
        }
      }
    }
  }
  return { named, missing };
}

describe("the files source comments name", () => {
  const temp = tempDirs("comment-paths-");
  after(() => temp.removeAll());

  it("exist in the repository", () => {
    const { named, missing } = commentNames(ROOT);
    assert.ok(named > 100, `too few paths read: ${named}`);
    assert.deepEqual(missing, []);
  });

  it("are checked: a planted bad path or file name is reported, a good one is not", () => {
    const root = temp.make();
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write("src/here.ts", "export const here = 1;\n");
    write("notes/guide.md", "# Guide\n");
    write(
      "src/server/app.ts",
      [
        "// Served as src/here.ts says (notes/guide.md); its list is in app-services.ts.",
        'const url = "http://example.test/ // src/in-a-string.ts";',
        "/**",
        " * Tested by test/unit/never-written.test.ts and gone.test.ts, built from here.ts",
        " * and test/support/*-suite.ts.",
        " */",
        "export const app = url;",
        "",
      ].join("\n"),
    );
    write("src/store/lua/script.lua", "-- reads src/store/gone.ts\nreturn 1\n");
    const { missing } = commentNames(root);
    assert.deepEqual(missing.sort(), [
      "src/server/app.ts: app-services.ts",
      "src/server/app.ts: gone.test.ts",
      "src/server/app.ts: test/unit/never-written.test.ts",
      "src/store/lua/script.lua: src/store/gone.ts",
    ]);
  });
});
