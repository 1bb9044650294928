import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, it } from "node:test";
import { repositoryFiles } from "../../support/repository-copy.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const files = repositoryFiles();
const markdownFiles = files.filter((file) => file.endsWith(".md"));

/** A markdown file's text outside fenced blocks and code spans, where links are links. */
function prose(text: string): string {
  return text
    .replace(/^ {0,3}(`{3,})[^\n]*\n[\s\S]*?^ {0,3}\1\s*$/gm, "")
    .replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

const anchorsOf = new Map<string, Set<string>>();
function anchors(file: string): Set<string> {
  let found = anchorsOf.get(file);
  if (found === undefined) {
    const text = prose(readFileSync(join(ROOT, file), "utf8"));
    found = new Set([...text.matchAll(/^#{1,6} +(.+)$/gm)].map((m) => slug(m[1] ?? "")));
    anchorsOf.set(file, found);
  }
  return found;
}

describe("the documentation's links", () => {
  it("reads the documents", () => {
    for (const file of ["README.md", "CONTRIBUTING.md", "client/README.md", "docs/running.md"]) {
      assert.ok(markdownFiles.includes(file), file);
    }
  });

  it("lead to files and headings that exist", () => {
    const broken: string[] = [];
    for (const file of markdownFiles) {
      const text = prose(readFileSync(join(ROOT, file), "utf8"));
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = match[1] ?? "";
        if (/^[a-z]+:/i.test(link)) {
          continue;
        }
        const [path = "", anchor] = link.split("#");
        const target = path === "" ? file : normalize(join(dirname(file), path));
        if (!existsSync(join(ROOT, target))) {
          broken.push(`${file}: ${link} (no ${target})`);
          continue;
        }
        if (anchor === undefined) {
          continue;
        }
        if (!target.endsWith(".md") || statSync(join(ROOT, target)).isDirectory()) {
          broken.push(`${file}: ${link} (an anchor into a file that is not markdown)`);
        } else if (!anchors(target).has(anchor)) {
          broken.push(`${file}: ${link} (no heading #${anchor} in ${target})`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it("keep README.md a front page (at most 250 lines; the rest lives in docs/ and CONTRIBUTING.md)", () => {
    const lines = readFileSync(join(ROOT, "README.md"), "utf8").trimEnd().split("\n").length;
    assert.ok(lines <= 250, `README.md has ${lines} lines`);
  });

  it("named in code and configuration are documents that exist", () => {
    const missing: string[] = [];
    for (const file of files.filter((f) => /\.(ts|mjs|js|json|ya?ml)$|Dockerfile$/.test(f))) {
      if (file.startsWith("bench/results/") || file.endsWith("package-lock.json")) {
        continue;
      }
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const match of text.matchAll(/\b(?:docs|client)\/[\w./-]*?[\w-]+\.md\b/g)) {
        if (!existsSync(join(ROOT, match[0]))) {
          missing.push(`${file}: ${match[0]}`);
        }
      }
    }
    assert.ok(files.length > 100, `too few files read: ${files.length}`);
    assert.deepEqual(missing, []);
  });
});
