import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { documentedFiles } from "../../support/markdown-blocks.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const page = readFileSync(join(ROOT, "CONTRIBUTING.md"), "utf8");
const scripts = Object.keys(
  (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: object }).scripts,
);

/** Every `code span` of the page. */
const spans = [...page.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? "");

describe("CONTRIBUTING.md's lists", () => {
  it("name files and folders that exist (a glob with * names at least one file)", () => {
    const paths = spans.filter((s) => /^[\w.-]+\/[\w./*-]*$/.test(s) && !s.startsWith("@"));
    assert.ok(paths.length > 20, `too few paths read: ${paths.length}`);
    const missing = paths.filter((path) => {
      if (!path.includes("*")) {
        return !existsSync(join(ROOT, path));
      }
      const slash = path.lastIndexOf("/");
      const folder = join(ROOT, path.slice(0, slash));
      const pattern = new RegExp(
        `^${path
          .slice(slash + 1)
          .replace(/\./g, "\\.")
          .replace(/\*/g, ".*")}$`,
      );
      return !existsSync(folder) || !readdirSync(folder).some((name) => pattern.test(name));
    });
    assert.deepEqual(missing, []);
  });

  it("name checks that are npm scripts", () => {
    const named = spans
      .filter((s) => s.startsWith("npm run "))
      .map((s) => s.slice("npm run ".length).split(" ")[0] ?? "");
    assert.ok(named.length >= 5);
    assert.deepEqual(
      named.filter((name) => !scripts.includes(name)),
      [],
    );
  });
});

// The other documents name files in prose too ("`test/integration/second-start.test.ts` runs …"):
// a file named in a code span under one of the repository's folders, with a file extension or a
// trailing slash, exists (text in code blocks is an example's, not a claim about the tree).
const FOLDERS = /^(?:src|test|client|docs|deploy|bench|scripts|proto)\/[\w./-]*(?:\.\w+|\/)$/;

describe("the documents' file names", () => {
  it("name files and folders that exist", () => {
    const named = documentedFiles().flatMap((file) => {
      const text = readFileSync(join(ROOT, file), "utf8").replace(
        /^```[^\n]*\n[\s\S]*?^```$/gm,
        "",
      );
      return [...text.matchAll(/`([^`\n]+)`/g)]
        .map((m) => m[1] ?? "")
        .filter((span) => FOLDERS.test(span))
        .map((span) => ({ file, span }));
    });
    assert.ok(named.length > 50, `too few paths read: ${named.length}`);
    assert.deepEqual(
      named.filter(({ span }) => !existsSync(join(ROOT, span))).map((n) => `${n.file}: ${n.span}`),
      [],
    );
  });
});
