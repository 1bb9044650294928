import { parseArgs } from "node:util";
import { UsageError } from "./usage-error.js";

/** The options a command accepts, in node:util parseArgs form. */
export type OptionSpec = Readonly<Record<string, { type: "string" | "boolean"; short?: string }>>;

/** The parsed values of an OptionSpec: each present or not. */
export type OptionValues<S extends OptionSpec> = {
  [K in keyof S]?: S[K]["type"] extends "boolean" ? boolean : string;
};

function isParseArgsError(err: unknown): err is TypeError & { code: string } {
  return (
    err instanceof TypeError &&
    "code" in err &&
    typeof err.code === "string" &&
    err.code.startsWith("ERR_PARSE_ARGS_")
  );
}

/** Parses a command's arguments strictly: unknown options and positionals are usage errors. */
export function parseOptions<S extends OptionSpec>(
  command: string,
  args: string[],
  spec: S,
): OptionValues<S> {
  try {
    const { values } = parseArgs({ args, options: spec, strict: true, allowPositionals: false });
    return values as OptionValues<S>;
  } catch (err) {
    if (isParseArgsError(err)) {
      // node's text goes on to explain `--` for positionals; its first sentence is what matters.
      throw new UsageError(command, err.message.split(". ")[0] ?? err.message);
    }
    throw err;
  }
}

/** The value of a required option, or a usage error naming it. */
export function required(command: string, value: string | undefined, flag: string): string {
  if (value === undefined || value === "") {
    throw new UsageError(command, `${flag} is required`);
  }
  return value;
}

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  const head = end === -1 ? args : args.slice(0, end);
  return head.includes("--help") || head.includes("-h");
}

/** True when the arguments ask for JSON output, so that even a usage error comes as JSON. */
export function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).includes("--json");
}
