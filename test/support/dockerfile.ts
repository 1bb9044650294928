import { spawn } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, posix } from "node:path";

/** One instruction of a Dockerfile: its keyword, its flags (`--from=build`) and its arguments. */
export interface Instruction {
  readonly keyword: string;
  readonly flags: Record<string, string>;
  /** The arguments: the JSON array of the exec form, or the rest of the line (shell form) as one. */
  readonly args: readonly string[];
  /** Whether the arguments were a JSON array (exec form). */
  readonly exec: boolean;
  readonly line: number;
}

/** One stage: `FROM image [AS name]` and what follows. */
export interface Stage {
  readonly name: string;
  readonly image: string;
  readonly instructions: readonly Instruction[];
}

/**
 * The stages of a Dockerfile: comments and blank lines dropped, `\` line
 * continuations joined. Only what this repository's Dockerfile uses is read.
 */
export function parseDockerfile(path: string): Stage[] {
  const stages: { name: string; image: string; instructions: Instruction[] }[] = [];
  const lines = readFileSync(path, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let text = lines[i]?.trim() ?? "";
    if (text === "" || text.startsWith("#")) {
      continue;
    }
    while (text.endsWith("\\") && i + 1 < lines.length) {
      i++;
      text = `${text.slice(0, -1)} ${lines[i]?.trim() ?? ""}`;
    }
    const [, keyword = "", rest = ""] = /^(\S+)\s*(.*)$/.exec(text) ?? [];
    const flags: Record<string, string> = {};
    let remainder = rest;
    for (let flag = /^--([\w-]+)=(\S+)\s+/.exec(remainder); flag !== null; ) {
      flags[flag[1] ?? ""] = flag[2] ?? "";
      remainder = remainder.slice(flag[0].length);
      flag = /^--([\w-]+)=(\S+)\s+/.exec(remainder);
    }
    const upper = keyword.toUpperCase();
    if (upper === "FROM") {
      const [image = "", as, name] = remainder.split(/\s+/);
      stages.push({
        name: as?.toUpperCase() === "AS" && name !== undefined ? name : String(stages.length),
        image,
        instructions: [],
      });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) {
      throw new Error(`${path}:${start}: ${upper} before FROM`);
    }
    const exec = remainder.startsWith("[");
    const args = exec ? (JSON.parse(remainder) as string[]) : [remainder];
    stage.instructions.push({ keyword: upper, flags, args, exec, line: start });
  }
  return stages;
}

/** The instructions that take whitespace-separated arguments (COPY src... dest, ENV k=v...). */
function words(instruction: Instruction): string[] {
  return instruction.exec ? [...instruction.args] : (instruction.args[0] ?? "").split(/\s+/);
}

/** ENV's `k=v` pairs (values without spaces or quotes, as this repository writes them). */
export function envOf(instruction: Instruction): Record<string, string> {
  return Object.fromEntries(
    words(instruction).map((pair) => {
      const at = pair.indexOf("=");
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

/** A stage replayed in a folder of this machine: its root stands for the image's WORKDIR. */
export interface ReplayedStage {
  readonly dir: string;
  /** The environment its ENV lines set. */
  readonly env: Record<string, string>;
  /** The last instruction of each kind not replayed (USER, CMD, HEALTHCHECK, EXPOSE). */
  readonly recorded: Record<string, Instruction>;
}

function run(command: string, cwd: string, env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`\`${command}\` exited ${code}:\n${output}`)),
    );
  });
}

export interface ReplayOptions {
  /** Where COPY without --from takes its files from (the build context). */
  context: string;
  /** The folder for this stage (its WORKDIR). */
  dir: string;
  /** The folders of the stages replayed before, by name, for COPY --from. */
  stages: Record<string, ReplayedStage>;
  /** The environment RUN lines get, before the stage's own ENV lines. */
  env: Record<string, string>;
}

/**
 * Replays a stage's WORKDIR, ENV, COPY and RUN lines in `dir`, as the image
 * build would, on this machine's node and npm. The image's WORKDIR is `dir`;
 * an absolute path elsewhere, or an instruction this does not know, fails.
 */
export async function replayStage(stage: Stage, opts: ReplayOptions): Promise<ReplayedStage> {
  mkdirSync(opts.dir, { recursive: true });
  let workdir = "";
  const env: Record<string, string> = {};
  const recorded: Record<string, Instruction> = {};
  const inStage = (base: string, workdirOf: string, path: string) => {
    if (isAbsolute(path)) {
      if (!path.startsWith(`${workdirOf}/`) && path !== workdirOf) {
        throw new Error(`${path} is outside the WORKDIR ${workdirOf}`);
      }
      return join(base, posix.relative(workdirOf, path));
    }
    return join(base, path);
  };
  for (const instruction of stage.instructions) {
    const where = `Dockerfile:${instruction.line}`;
    switch (instruction.keyword) {
      case "WORKDIR":
        workdir = instruction.args[0] ?? "";
        break;
      case "ENV":
        Object.assign(env, envOf(instruction));
        break;
      case "COPY": {
        const parts = words(instruction);
        const dest = parts.pop() ?? "";
        const from = instruction.flags.from;
        const source = from === undefined ? undefined : opts.stages[from];
        if (from !== undefined && source === undefined) {
          throw new Error(`${where}: no stage ${from} replayed`);
        }
        const target = inStage(opts.dir, workdir, dest);
        for (const part of parts) {
          const src =
            source === undefined ? join(opts.context, part) : inStage(source.dir, workdir, part);
          // Docker's rules: a folder's contents go to dest; a file goes into dest/ or to dest.
          const into = dest.endsWith("/") && !statSync(src).isDirectory();
          cpSync(src, into ? join(target, posix.basename(part)) : target, { recursive: true });
        }
        break;
      }
      case "RUN":
        if (instruction.exec) {
          throw new Error(`${where}: RUN in exec form is not replayed`);
        }
        // Replayed, it would empty this machine's npm cache, which the replay shares.
        if (/\bnpm\s+cache\s+clean/.test(instruction.args[0] ?? "")) {
          throw new Error(
            `${where}: npm cache clean is not replayed; use RUN --mount=type=cache,target=/root/.npm`,
          );
        }
        await run(instruction.args[0] ?? "", inStage(opts.dir, workdir, workdir || "."), {
          ...opts.env,
          ...env,
        });
        break;
      case "USER":
      case "CMD":
      case "HEALTHCHECK":
      case "EXPOSE":
        recorded[instruction.keyword] = instruction;
        break;
      default:
        throw new Error(`${where}: ${instruction.keyword} is not replayed`);
    }
  }
  return { dir: opts.dir, env, recorded };
}
