import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildIfStale } from "./build.js";
import { credentialsText, TEST_OPERATOR } from "./test-operator.js";

const ROOT = resolve(import.meta.dirname, "../..");
const MAIN = join(ROOT, "dist/main.js");

export interface MainProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit code, or the signal that ended it. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  /** `exited`, or a rejection after `timeoutMs` (a process that ignores a signal fails, not hangs). */
  exitedWithin(timeoutMs?: number): Promise<number | NodeJS.Signals | null>;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the first `count` matches of `pattern` in the output, or throws after `timeoutMs`. */
  waitFor(pattern: RegExp, count?: number, timeoutMs?: number): Promise<RegExpMatchArray[]>;
}

// With whether each leads its own process group (then the group is killed).
const started: { run: MainProcess; group: boolean }[] = [];

function track(child: ChildProcess, group = false): MainProcess {
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  // A child that could not start: said in its output (exitedWithin then fails, naming it).
  child.on("error", (err) => {
    output += `${String(err)}\n`;
  });
  const exited = new Promise<number | NodeJS.Signals | null>((done) =>
    child.once("exit", (code, signal) => done(code ?? signal)),
  );
  const run: MainProcess = {
    child,
    exited,
    exitedWithin(timeoutMs = 10_000) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`still running after ${timeoutMs} ms:\n${output}`)),
          timeoutMs,
        );
      });
      return Promise.race([exited, late]).finally(() => clearTimeout(timer));
    },
    output: () => output,
    async waitFor(pattern, count = 1, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const matches = [...output.matchAll(new RegExp(pattern, "g"))];
        if (matches.length >= count) {
          return matches;
        }
        await new Promise((done) => setTimeout(done, 50));
      }
      throw new Error(`no ${count}× ${pattern} within ${timeoutMs} ms in:\n${output}`);
    },
  };
  started.push({ run, group });
  return run;
}

let testCredentials: string | undefined;

/**
 * A credentials file listing the test operator (TEST_OPERATOR), written once
 * per test process and removed when it exits: what the services started here
 * use unless a test sets ADMIN_CREDENTIALS_FILE ("" for the generated operator).
 */
function testCredentialsFile(): string {
  if (testCredentials === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "perps-operators-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    testCredentials = join(dir, "admin-credentials");
    writeFileSync(testCredentials, credentialsText([TEST_OPERATOR]), { mode: 0o600 });
  }
  return testCredentials;
}

const environment = (env: Record<string, string>) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  ADMIN_CREDENTIALS_FILE: testCredentialsFile(),
  ...env,
});

/**
 * Runs `npm start`'s command (node dist/main.js, built first if src/ changed)
 * as a child process with only `env` (and PATH, HOME and the test operator's
 * ADMIN_CREDENTIALS_FILE unless given) in its environment, in `cwd`; `node`
 * names another node executable (a link named `nodejs`, say) or its options.
 */
export function startMainProcess(
  env: Record<string, string>,
  cwd = ROOT,
  node: { executable?: string; args?: readonly string[] } = {},
): MainProcess {
  buildIfStale();
  return track(
    spawn(node.executable ?? process.execPath, [...(node.args ?? []), MAIN], {
      cwd,
      env: environment(env),
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
}

/**
 * Runs one of the repository's TypeScript files (through tsx) as a child
 * process, with `env` (and PATH, HOME unless given) in its environment: for
 * programs written for one test, such as a primary with odd workers.
 */
export function startScript(script: string, env: Record<string, string>): MainProcess {
  return track(
    spawn(process.execPath, ["--import", "tsx", script], {
      cwd: ROOT,
      env: environment(env),
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
}

/**
 * Runs the real `npm start` in the repository (or in `cwd`, a copy of it),
 * as a process manager or a terminal would: npm leads its own process group,
 * so a test can signal npm's pid alone or the whole group (what Ctrl-C does).
 * Give `env` ports 0 and EMBEDDED_REDIS_DIR (or REDIS_URL) so that the
 * repository's .data/ is never used.
 */
export function startNpmStart(env: Record<string, string>, cwd = ROOT): MainProcess {
  // Its prestart would build too, but inside the time the test waits for it.
  buildIfStale();
  return track(
    spawn("npm", ["start", "--silent"], {
      cwd,
      env: environment(env),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    }),
    true,
  );
}

/** Kills every process started here that still runs (for a suite's `after`). */
export function killMainProcesses(): void {
  for (const { run, group } of started) {
    const pid = run.child.pid;
    if (group && pid !== undefined) {
      // npm and the service it started; the embedded Redis follows the service.
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // The group is gone already.
      }
    } else if (run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill("SIGKILL");
    }
  }
}
