import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "./markdown-blocks.js";

export { REPO_ROOT };

// A checkout as a newcomer or a build stage has it, made in a temp folder
// from this repository's files: for tests of installs (production-install,
// container-recipe).

/** The repository's files as git knows them (tracked, and new ones not ignored), that exist. */
export function repositoryFiles(): string[] {
  const listed = execFileSync(
    "git",
    ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    { cwd: REPO_ROOT, encoding: "utf8" },
  );
  return listed.split("\0").filter((file) => file !== "" && existsSync(join(REPO_ROOT, file)));
}

/** The built `dist/` folders (git ignores them): the root's, and any package's below it. */
export function distFolders(dir = "", depth = 0): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (!entry.isDirectory() || entry.name === "node_modules" || entry.name.startsWith(".")) {
      return [];
    }
    if (entry.name === "dist") {
      return [path];
    }
    return depth < 2 ? distFolders(path, depth + 1) : [];
  });
}

export function copyInto(target: string, files: readonly string[]): void {
  for (const file of files) {
    mkdirSync(dirname(join(target, file)), { recursive: true });
    copyFileSync(join(REPO_ROOT, file), join(target, file));
  }
}
