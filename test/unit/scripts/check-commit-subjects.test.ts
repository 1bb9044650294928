import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  checkCommitSubjects,
  MAX_SUBJECT_CHARACTERS,
  SINCE,
} from "../../../scripts/check-commit-subjects.js";
import { tempDirs } from "../../support/temp-dirs.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const SCRIPT = join(ROOT, "scripts", "check-commit-subjects.ts");
// The command runs in a repository of its own, where tsx is not installed: loaded from here.
const TSX = import.meta.resolve("tsx");

// A fixed identity and no user configuration: the test's commits are its own.
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.test",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.test",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
};

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();

/** A repository with one commit per subject, in order; returns it and each commit's hash. */
function repositoryWith(dir: string, subjects: readonly string[]): string[] {
  git(dir, "init", "--quiet", "--initial-branch=main");
  return subjects.map((subject) => {
    git(dir, "commit", "--quiet", "--allow-empty", "-m", subject, "-m", "the body: any length");
    return git(dir, "rev-parse", "HEAD");
  });
}

const TOO_LONG = "x".repeat(MAX_SUBJECT_CHARACTERS + 1);
// 72 characters, 3 of them outside ASCII (more than 72 bytes): the limit counts characters.
const AT_LIMIT = `${"y".repeat(MAX_SUBJECT_CHARACTERS - 3)}→µé`;

describe("scripts/check-commit-subjects.ts", () => {
  const temp = tempDirs("commit-subjects-");
  after(() => temp.removeAll());

  it("reports the subjects over the limit after the base commit, and only those", () => {
    const dir = temp.make();
    const [, base = ""] = repositoryWith(dir, [
      `${TOO_LONG} before the base`,
      "the base",
      AT_LIMIT,
      TOO_LONG,
      "short",
    ]);
    const result = checkCommitSubjects({ cwd: dir, since: base });
    assert.ok("checked" in result);
    assert.equal(result.checked, 3);
    assert.deepEqual(
      result.long.map((l) => l.subject),
      [TOO_LONG],
    );
  });

  it("passes when every subject since the base fits", () => {
    const dir = temp.make();
    const [base = ""] = repositoryWith(dir, ["the base", AT_LIMIT, "short"]);
    assert.deepEqual(checkCommitSubjects({ cwd: dir, since: base }), { checked: 2, long: [] });
  });

  it("refuses a base that is not in the history", () => {
    const dir = temp.make();
    repositoryWith(dir, ["one"]);
    assert.throws(() => checkCommitSubjects({ cwd: dir, since: SINCE }), /is not in this/);
  });

  it("in a shallow clone that does not reach the base, reads every commit it has", () => {
    const origin = temp.make();
    const [base = ""] = repositoryWith(origin, ["the base", "short", TOO_LONG]);
    const clone = temp.make();
    git(clone, "clone", "--quiet", "--depth=2", `file://${origin}`, ".");
    const result = checkCommitSubjects({ cwd: clone, since: base });
    assert.ok("checked" in result);
    assert.equal(result.checked, 2);
    assert.deepEqual(
      result.long.map((l) => l.subject),
      [TOO_LONG],
    );
  });

  it("says it read nothing outside a git work tree", () => {
    assert.deepEqual(checkCommitSubjects({ cwd: temp.make() }), {
      skipped: "not a git work tree",
    });
  });

  it("as a command: exits 1 naming each long subject's commit, 0 when none", () => {
    const dir = temp.make();
    const [base = "", long = ""] = repositoryWith(dir, ["the base", TOO_LONG]);
    const run = (since: string) =>
      spawnSync(process.execPath, ["--import", TSX, SCRIPT, `--since=${since}`], {
        cwd: dir,
        env: GIT_ENV,
        encoding: "utf8",
      });
    const refused = run(base);
    assert.equal(refused.status, 1, refused.stdout);
    assert.match(
      refused.stderr,
      new RegExp(`^${long.slice(0, 7)}\\w*: 73 characters: x{73}$`, "m"),
    );
    const passed = run(long);
    assert.equal(passed.status, 0, passed.stderr);
    assert.match(passed.stdout, /0 checked, none over 72 characters/);
  });

  it("as a command: exits 1 when the base is not in the history", () => {
    const dir = temp.make();
    repositoryWith(dir, ["one"]);
    const run = spawnSync(process.execPath, ["--import", TSX, SCRIPT], {
      cwd: dir,
      env: GIT_ENV,
      encoding: "utf8",
    });
    assert.equal(run.status, 1, run.stdout);
    assert.match(run.stderr, new RegExp(`commit ${SINCE} is not in this repository's history`));
  });
});
