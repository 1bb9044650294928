// Part of `npm run lint`: every commit subject since SINCE is at most
// MAX_SUBJECT_CHARACTERS long (CONTRIBUTING.md). Commits before SINCE are
// left as they are: history is not rewritten.
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";

/** The last commit before the check; its own subject and older ones are not checked. */
export const SINCE = "9af9f192c151efff9be482bfab4067935f6dcf53";

export const MAX_SUBJECT_CHARACTERS = 72;

/** A commit whose subject is too long: its short hash and its subject. */
export interface LongSubject {
  readonly commit: string;
  readonly subject: string;
}

/** What the check found: the long subjects, and how many commits it read, or why it read none. */
export type SubjectCheck =
  | { readonly checked: number; readonly long: readonly LongSubject[] }
  | { readonly skipped: string };

const git = (cwd: string, args: readonly string[]) =>
  execFileSync("git", [...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

const succeeds = (cwd: string, args: readonly string[]) => {
  try {
    git(cwd, args);
    return true;
  } catch {
    return false;
  }
};

/**
 * The commits of HEAD in the git repository at `cwd` after `since`, merges
 * included, whose subject is over `max` characters (Unicode code points).
 * A shallow clone that does not reach `since` has only later commits: all
 * are read. Outside a git work tree (a packed copy) there is nothing to read.
 */
export function checkCommitSubjects(options: {
  cwd: string;
  since?: string;
  max?: number;
}): SubjectCheck {
  const { cwd, since = SINCE, max = MAX_SUBJECT_CHARACTERS } = options;
  if (!succeeds(cwd, ["rev-parse", "--is-inside-work-tree"])) {
    return { skipped: "not a git work tree" };
  }
  const known = succeeds(cwd, ["cat-file", "-e", `${since}^{commit}`]);
  if (!known && git(cwd, ["rev-parse", "--is-shallow-repository"]).trim() !== "true") {
    throw new Error(`commit ${since} is not in this repository's history`);
  }
  const range = known ? `${since}..HEAD` : "HEAD";
  const lines = git(cwd, ["log", "--format=%h%x00%s", range])
    .split("\n")
    .filter((line) => line !== "");
  const long = lines
    .map((line) => {
      const [commit = "", subject = ""] = line.split("\0");
      return { commit, subject };
    })
    .filter(({ subject }) => [...subject].length > max);
  return { checked: lines.length, long };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  // `--since=<commit>`: another base, for a check of a repository that is not this one's history.
  const since = process.argv.find((a) => a.startsWith("--since="))?.slice("--since=".length);
  let result: SubjectCheck;
  try {
    result = checkCommitSubjects({ cwd: process.cwd(), ...(since === undefined ? {} : { since }) });
  } catch (error) {
    console.error(`commit subjects: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  if ("skipped" in result) {
    console.log(`commit subjects: not checked (${result.skipped})`);
  } else if (result.long.length > 0) {
    for (const { commit, subject } of result.long) {
      console.error(`${commit}: ${[...subject].length} characters: ${subject}`);
    }
    console.error(
      `commit subjects are at most ${MAX_SUBJECT_CHARACTERS} characters: reword the commits above (git rebase -i)`,
    );
    process.exit(1);
  } else {
    console.log(
      `commit subjects: ${result.checked} checked, none over ${MAX_SUBJECT_CHARACTERS} characters`,
    );
  }
}
