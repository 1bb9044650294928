import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** What one script printed (stdout and stderr, interleaved as a terminal shows them). */
export interface ShellResult {
  readonly output: string;
  /** The exit status of the script's last command. */
  readonly status: number;
  /** The shell's working directory after the script. */
  readonly cwd: string;
}

export interface ShellSessionOptions {
  /** Where the shell starts. */
  cwd: string;
  /** Its whole environment (nothing is inherited). */
  env: Record<string, string>;
  /** A private folder for the scripts it is given. */
  scriptDir: string;
}

/**
 * One bash process that runs scripts one after another, as a reader pastes
 * blocks into one terminal: variables, functions and the working directory
 * carry over from one script to the next. Each script is sourced from a file
 * with stdin from /dev/null, so nothing in it can read the commands that follow.
 */
export class ShellSession {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly scriptDir: string;
  private buffer = "";
  private count = 0;
  private exited = false;
  private wake: (() => void) | undefined;

  constructor(opts: ShellSessionOptions) {
    this.scriptDir = opts.scriptDir;
    this.child = spawn("bash", ["--noprofile", "--norc"], {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group, so that whatever a script leaves running ends with it.
      detached: true,
    });
    const collect = (chunk: Buffer) => {
      this.buffer += chunk.toString();
      this.wake?.();
    };
    this.child.stdout.on("data", collect);
    this.child.stderr.on("data", collect);
    this.child.once("exit", () => {
      this.exited = true;
      this.wake?.();
    });
    // One stream, in the order a terminal would show it.
    this.child.stdin.write("exec 2>&1\n");
  }

  /** Runs one script; rejects if it does not finish within `timeoutMs` or ends the shell. */
  async run(script: string, timeoutMs: number): Promise<ShellResult> {
    if (this.exited) {
      throw new Error("the shell has ended (an earlier script failed to finish)");
    }
    this.count++;
    const file = join(this.scriptDir, `script-${this.count}.sh`);
    writeFileSync(file, script);
    const mark = `@@end-of-script-${this.count}-${randomBytes(6).toString("hex")}@@`;
    this.buffer = "";
    this.child.stdin.write(
      `source '${file}' </dev/null; printf '\\n%s %s %s\\n' '${mark}' "$?" "$PWD"\n`,
    );
    const ending = new RegExp(`\\n${mark} (\\d+) (.*)\\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = ending.exec(this.buffer);
      if (match !== null) {
        return {
          output: this.buffer.slice(0, match.index),
          status: Number(match[1]),
          cwd: match[2] ?? "",
        };
      }
      if (this.exited) {
        throw new Error(`the shell exited during the script; it printed:\n${this.buffer}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        this.killGroup();
        throw new Error(
          `the script did not finish in ${timeoutMs} ms; it printed:\n${this.buffer}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Ends the shell (SIGKILL after 5 s) and anything a script left running in its group. */
  async close(): Promise<void> {
    if (!this.exited) {
      const gone = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
      this.child.stdin.end("exit\n");
      const timer = setTimeout(() => this.killGroup(), 5000);
      await gone;
      clearTimeout(timer);
    }
    this.killGroup();
  }

  private killGroup(): void {
    const pid = this.child.pid;
    if (pid === undefined) {
      return;
    }
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
  }
}
