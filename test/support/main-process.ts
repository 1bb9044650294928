import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");
const MAIN = join(ROOT, "src/main.ts");

export interface MainProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the first `count` matches of `pattern` in the output, or throws after `timeoutMs`. */
  waitFor(pattern: RegExp, count?: number, timeoutMs?: number): Promise<RegExpMatchArray[]>;
}

const started: MainProcess[] = [];

/**
 * Runs `npm start`'s command (tsx src/main.ts) as a child process with only
 * `env` (and PATH, HOME unless given) in its environment, in `cwd`.
 */
export function startMainProcess(env: Record<string, string>, cwd = ROOT): MainProcess {
  const child = spawn(process.execPath, [TSX, MAIN], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const run: MainProcess = {
    child,
    exited,
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
  started.push(run);
  return run;
}

/** Kills every process started here that still runs (for a suite's `after`). */
export function killMainProcesses(): void {
  for (const run of started) {
    run.child.kill("SIGKILL");
  }
}
