import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { sourceComments } from "../../support/source-comments.js";
import { tempDirs } from "../../support/temp-dirs.js";

// The rule (CONTRIBUTING.md, "Tests mirror the code"): a module's unit tests are found from its
// path, `src/<dir>/<name>.ts` → `test/unit/<dir>/<name>.test.ts` or `<name>-<topic>.test.ts`, and
// each imports the module it is named after; a module only a whole-service test can show says so
// in its leading doc comment, `Tested by test/integration/<file>.test.ts.`; type-only modules are
// exempt; every test file of a mirror folder is named after a module of the folder it mirrors.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * The code whose unit tests mirror it, and where they live. The service's modules each need
 * findable tests (rules 1–3); the bench's, the scripts' and the tests' shared support are tools,
 * whose test files need only be named after what they test (rule 4).
 */
const MIRRORS = [
  { code: "src", tests: "test/unit", everyModule: true },
  { code: "bench", tests: "test/unit/bench", everyModule: false },
  { code: "scripts", tests: "test/unit/scripts", everyModule: false },
  { code: "test/support", tests: "test/unit/support", everyModule: false },
] as const;

/** Folders of `test/unit/` that mirror no code: checks of the whole tree and of the `.proto` files. */
const NOT_MIRRORS = new Set(["test/unit/architecture", "test/unit/proto"]);

/** Folders never walked: generated code (and any dependencies' folder). */
const SKIPPED = new Set(["src/gen"]);

/** Every `.ts` file under `dir` (relative to `root`, `/`-separated), skipped folders aside. */
function tsFilesUnder(root: string, dir: string): string[] {
  if (SKIPPED.has(dir) || dir.endsWith("node_modules") || !existsSync(join(root, dir))) {
    return [];
  }
  return readdirSync(join(root, dir), { withFileTypes: true })
    .flatMap((entry) => {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        return tsFilesUnder(root, path);
      }
      return path.endsWith(".ts") ? [path] : [];
    })
    .sort();
}

/**
 * Whether a module has no runtime code: its statements, comments aside, are only type imports
 * and exports, interfaces and type aliases (a `.d.ts` file is declarations by definition).
 */
function isTypeOnly(file: string, text: string): boolean {
  if (file.endsWith(".d.ts")) {
    return true;
  }
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  return (
    source.statements.length > 0 &&
    source.statements.every(
      (s) =>
        ts.isInterfaceDeclaration(s) ||
        ts.isTypeAliasDeclaration(s) ||
        (ts.isImportDeclaration(s) && s.importClause?.isTypeOnly === true) ||
        (ts.isExportDeclaration(s) && s.isTypeOnly),
    )
  );
}

/** A comment's words without its markers (`/**`, ` * `, `//`, `*\/`), lines joined by spaces. */
function commentWords(comment: string): string {
  return comment
    .replace(/^\/\*\*?|\*\/$/g, "")
    .split("\n")
    .map((line) => line.replace(/^\s*(?:\/\/+|\*(?!\/))?\s?/, "").trim())
    .filter((line) => line !== "")
    .join(" ");
}

/**
 * The words of a file's leading doc comment: its first comment, and with a `//` one the `//`
 * lines right under it (a block); "" when it has none.
 */
function leadingComment(file: string, text: string): string {
  const comments = sourceComments(file, text);
  const first = comments[0];
  if (first === undefined) {
    return "";
  }
  const block = [first];
  if (first.text.startsWith("//")) {
    for (const next of comments.slice(1)) {
      const last = block[block.length - 1];
      const between = last === undefined ? "" : text.slice(last.end, next.pos);
      if (!next.text.startsWith("//") || !/^[ \t]*\r?\n[ \t]*$/.test(between)) {
        break;
      }
      block.push(next);
    }
  }
  return block.map((c) => commentWords(c.text)).join(" ");
}

const TEST_PATH = String.raw`test/[\w./-]+\.test\.ts`;
const TESTED_BY = new RegExp(
  String.raw`Tested by (${TEST_PATH}(?:(?:,\s*(?:and\s+)?|\s+and\s+)${TEST_PATH})*)`,
  "g",
);

/** The files each `Tested by test/….test.ts[, test/….test.ts …]` line of some words names. */
function testedBy(words: string): string[][] {
  return [...words.matchAll(TESTED_BY)].map((m) =>
    (m[1] ?? "").split(/,\s*(?:and\s+)?|\s+and\s+/).filter((path) => path !== ""),
  );
}

/** The modules a test file can be named after: `<name>.test.ts` or `<name>-<topic>.test.ts`. */
function namedAfter(testFile: string, moduleNames: readonly string[]): string[] {
  const base = posix.basename(testFile).replace(/\.test\.ts$/, "");
  return moduleNames.filter((name) => base === name || base.startsWith(`${name}-`));
}

/** The repository files a test imports by relative path (`.js` read as the `.ts` source). */
function importedFiles(testFile: string, text: string): Set<string> {
  const source = ts.createSourceFile(testFile, text, ts.ScriptTarget.Latest);
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    // A type-only import tests nothing of the module.
    const typeOnly = ts.isImportDeclaration(node)
      ? node.importClause?.isTypeOnly === true
      : ts.isExportDeclaration(node) && node.isTypeOnly;
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      !typeOnly &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return new Set(
    specifiers
      .filter((s) => s.startsWith("."))
      .map((s) => posix.normalize(posix.join(posix.dirname(testFile), s)).replace(/\.js$/, ".ts")),
  );
}

/**
 * The files a test imports, and those its `test/support/` helpers import in
 * turn: a test may reach its module through a shared set-up
 * (test/support/rest-gateway-server.ts serves the gateway its tests call).
 */
function reachedFiles(root: string, testFile: string): Set<string> {
  const reached = new Set<string>();
  const read = (file: string) => {
    for (const imported of importedFiles(file, readFileSync(join(root, file), "utf8"))) {
      if (reached.has(imported)) {
        continue;
      }
      reached.add(imported);
      if (imported.startsWith("test/support/") && existsSync(join(root, imported))) {
        read(imported);
      }
    }
  };
  read(testFile);
  return reached;
}

/** The code folder a folder of unit tests mirrors (`test/unit/bench/ladder` → `bench/ladder`). */
function mirroredFolder(testDir: string): string | undefined {
  // The most specific mirror: test/unit/bench/ is bench/'s, not src/bench/'s.
  const mirror = [...MIRRORS]
    .sort((a, b) => b.tests.length - a.tests.length)
    .find((m) => testDir === m.tests || testDir.startsWith(`${m.tests}/`));
  return mirror === undefined ? undefined : mirror.code + testDir.slice(mirror.tests.length);
}

/** Where the unit tests of a module's folder live (`src/log` → `test/unit/log`). */
function testFolder(moduleDir: string): string {
  const mirror = MIRRORS.find((m) => moduleDir === m.code || moduleDir.startsWith(`${m.code}/`));
  return mirror === undefined ? moduleDir : mirror.tests + moduleDir.slice(mirror.code.length);
}

const stem = (file: string) => posix.basename(file).replace(/\.ts$/, "");

/** What breaks the rule in the repository at `root`: one line per module or test file, saying what to do. */
function mirrorFailures(root: string): { failures: string[]; modules: number } {
  const read = (file: string) => readFileSync(join(root, file), "utf8");
  const modules = MIRRORS.flatMap((m) => tsFilesUnder(root, m.code));
  const testFiles = tsFilesUnder(root, "test/unit").filter(
    (file) =>
      file.endsWith(".test.ts") && ![...NOT_MIRRORS].some((dir) => file.startsWith(`${dir}/`)),
  );
  const failures: string[] = [];

  // Rule 4: a test file of a mirror folder is named after a module there, and imports it.
  const tested = new Set<string>();
  for (const testFile of testFiles) {
    const codeDir = mirroredFolder(posix.dirname(testFile));
    if (codeDir === undefined) {
      continue;
    }
    const here = modules.filter((m) => posix.dirname(m) === codeDir && !m.endsWith(".d.ts"));
    const candidates = namedAfter(testFile, here.map(stem));
    if (candidates.length === 0) {
      failures.push(
        `${testFile}: named after no module of ${codeDir}/; rename it (git mv) to ` +
          "<module>.test.ts or <module>-<topic>.test.ts of the module it tests, or split it",
      );
      continue;
    }
    const imported = reachedFiles(root, testFile);
    const its = candidates.map((name) => `${codeDir}/${name}.ts`).filter((m) => imported.has(m));
    if (its.length === 0) {
      failures.push(
        `${testFile}: named after ${candidates.map((n) => `${codeDir}/${n}.ts`).join(" or ")} ` +
          "but does not import it (itself or through test/support/); test that module, or " +
          "rename the file after the one it tests",
      );
    }
    for (const module of its) {
      tested.add(module);
    }
  }

  // Rules 1–3: a module has a mirrored test, a Tested-by line, or no runtime code.
  const needTests = MIRRORS.filter((m) => m.everyModule).flatMap((m) => tsFilesUnder(root, m.code));
  for (const module of needTests) {
    const text = read(module);
    // Every Tested-by line names files that exist, wherever in the module it is.
    const named = sourceComments(module, text).flatMap((c) =>
      testedBy(commentWords(c.text)).flat(),
    );
    for (const path of named.filter((p) => !existsSync(join(root, p)))) {
      failures.push(
        `${module}: its Tested by line names ${path}, which does not exist; ` +
          "name the test files that exercise it",
      );
    }
    if (tested.has(module) || isTypeOnly(module, text)) {
      continue;
    }
    if (testedBy(leadingComment(module, text)).length === 0) {
      const tests = `${testFolder(posix.dirname(module))}/${stem(module)}`;
      failures.push(
        `${module}: no unit test at ${tests}.test.ts (or ${tests}-<topic>.test.ts); write one, ` +
          "or add `Tested by test/integration/<file>.test.ts.` (the whole-service tests that " +
          "exercise it) to its leading doc comment" +
          (named.length > 0 ? " (its Tested by line is not in that comment)" : ""),
      );
    }
  }
  return { failures, modules: modules.length };
}

describe("every module's tests are findable from its path (test-mirror)", () => {
  it("holds for every module and unit test file", () => {
    const { failures, modules } = mirrorFailures(ROOT);
    assert.ok(modules > 150, `too few modules read: ${modules}`);
    assert.equal(failures.length, 0, `${failures.length} failures:\n${failures.join("\n")}`);
  });
});

describe("the test-mirror check itself", () => {
  const temp = tempDirs("test-mirror-");
  after(() => temp.removeAll());

  it("tells type-only modules from modules with runtime code", () => {
    const typeOnly = [
      "/** A shape. */\nexport interface A { a: number }",
      'import type { B } from "./b.js";\n// why\nexport type C = B | string;\ninterface D {}\ntype E = D;',
      'export type { F } from "./f.js";',
    ];
    for (const text of typeOnly) {
      assert.equal(isTypeOnly("m.ts", text), true, text);
    }
    const runtime = [
      "export interface A { a: number }\nexport const a = 1;",
      'import { b } from "./b.js";\nexport type C = typeof b;',
      'import "./side-effect.js";\nexport type C = string;',
      "export enum E { A }",
      "// only a comment",
      'export { f } from "./f.js";',
    ];
    for (const text of runtime) {
      assert.equal(isTypeOnly("m.ts", text), false, text);
    }
    assert.equal(isTypeOnly("m.d.ts", 'declare module "x" { export const y: number; }'), true);
  });

  it("reads the leading doc comment: the first comment, or the first block of // lines", () => {
    assert.equal(
      leadingComment(
        "m.ts",
        'import { a } from "./a.js";\n\n/**\n * Does a.\n * Tested by x.\n */\n',
      ),
      "Does a. Tested by x.",
    );
    assert.equal(
      leadingComment("m.ts", "// One,\n// two.\n\n// Not this.\nexport const a = 1;\n"),
      "One, two.",
    );
    assert.equal(leadingComment("m.ts", "// First.\nconst a = 1; // after code\n"), "First.");
    assert.equal(leadingComment("m.ts", 'const a = "// not a comment";\n'), "");
  });

  it("reads the files a Tested by line names, however the line wraps", () => {
    assert.deepEqual(testedBy("Does a. Tested by test/integration/a.test.ts."), [
      ["test/integration/a.test.ts"],
    ]);
    assert.deepEqual(
      testedBy(
        "Tested by test/integration/a.test.ts, test/integration/b-c.test.ts and test/unit/x/d.test.ts.",
      ),
      [["test/integration/a.test.ts", "test/integration/b-c.test.ts", "test/unit/x/d.test.ts"]],
    );
    assert.deepEqual(testedBy("Tested by the integration tests."), []);
    assert.deepEqual(testedBy("Tested by src/a.ts."), []);
  });

  it("matches test files to the modules they are named after", () => {
    const names = ["config", "config-error", "request-line", "logger"];
    assert.deepEqual(namedAfter("test/unit/config/config.test.ts", names), ["config"]);
    assert.deepEqual(namedAfter("test/unit/config/config-error.test.ts", names), [
      "config",
      "config-error",
    ]);
    assert.deepEqual(namedAfter("test/unit/log/request-line-fields.test.ts", names), [
      "request-line",
    ]);
    assert.deepEqual(namedAfter("test/unit/log/loggers.test.ts", names), []);
    assert.deepEqual(
      [...importedFiles("test/unit/log/a.test.ts", 'import { x } from "../../../src/log/a.js";')],
      ["src/log/a.ts"],
    );
  });

  it("reports every kind of failure in a planted tree, and passes a good one", () => {
    const root = temp.make();
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    const fine = "export const x = 1;\n";
    write("src/log/tested.ts", fine);
    write("test/unit/log/tested.test.ts", 'import { x } from "../../../src/log/tested.js";\n');
    write("src/log/topic.ts", fine);
    write("test/unit/log/topic-lines.test.ts", 'import("../../../src/log/topic.js");\n');
    write("test/support/topic-suite.ts", 'export * from "../../src/log/topic.js";\n');
    write("test/unit/log/topic-suite.test.ts", 'import "../../support/topic-suite.js";\n');
    write("src/log/shapes.ts", "export interface Shape { a: number }\n");
    write(
      "src/log/wired.ts",
      `/**\n * Wires.\n * Tested by test/integration/w.test.ts.\n */\n${fine}`,
    );
    write("test/integration/w.test.ts", "");
    write("src/gen/made.ts", fine);
    write("bench/tool.ts", fine);
    write("test/unit/bench/tool.test.ts", 'import "../../../bench/tool.js";\n');
    write("test/unit/architecture/anything.test.ts", "");
    // The planted support module counts too: a test of its own would mirror it.
    assert.deepEqual(mirrorFailures(root), { failures: [], modules: 6 });

    write("src/log/untested.ts", fine);
    write("src/log/gone.ts", `// Tested by test/integration/gone.test.ts.\n${fine}`);
    write("src/log/late.ts", `// Does late.\n${fine}\n// Tested by test/integration/w.test.ts.\n`);
    write("test/unit/log/stray.test.ts", "");
    write(
      "test/unit/log/tested-more.test.ts",
      'import type { x } from "../../../src/log/tested.js";\n',
    );
    write("test/unit/nowhere/a.test.ts", "");
    // A tool of scripts/ needs no test of its own.
    write("scripts/tool.ts", fine);
    const { failures } = mirrorFailures(root);
    // What is wrong, before the `;`; what to do, after it.
    assert.deepEqual(
      failures.map((f) => f.slice(0, f.indexOf(";"))),
      [
        "test/unit/log/stray.test.ts: named after no module of src/log/",
        "test/unit/log/tested-more.test.ts: named after src/log/tested.ts but does not import it (itself or through test/support/)",
        "test/unit/nowhere/a.test.ts: named after no module of src/nowhere/",
        "src/log/gone.ts: its Tested by line names test/integration/gone.test.ts, which does not exist",
        "src/log/late.ts: no unit test at test/unit/log/late.test.ts (or test/unit/log/late-<topic>.test.ts)",
        "src/log/untested.ts: no unit test at test/unit/log/untested.test.ts (or test/unit/log/untested-<topic>.test.ts)",
      ],
    );
    assert.match(failures[4] ?? "", /\(its Tested by line is not in that comment\)$/);
    assert.ok(failures.every((f) => f.length > f.indexOf(";") + 10));
  });
});
