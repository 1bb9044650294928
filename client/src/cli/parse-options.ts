import { parseArgs } from "node:util";
import { UsageError } from "./usage-error.js";

/** The options a command accepts, in node:util parseArgs form (`multiple`: repeatable). */
export type OptionSpec = Readonly<
  Record<string, { type: "string" | "boolean"; short?: string; multiple?: true }>
>;

/** The parsed values of an OptionSpec: each present or not; a repeatable one as its list. */
export type OptionValues<S extends OptionSpec> = {
  [K in keyof S]?: S[K]["type"] extends "boolean"
    ? boolean
    : S[K]["multiple"] extends true
      ? string[]
      : string;
};

function isParseArgsError(err: unknown): err is TypeError & { code: string } {
  return (
    err instanceof TypeError &&
    "code" in err &&
    typeof err.code === "string" &&
    err.code.startsWith("ERR_PARSE_ARGS_")
  );
}

/**
 * The arguments with each option that takes a value joined to the argument
 * after it (`--token-id -AbC` becomes `--token-id=-AbC`, `-x v` becomes
 * `--long=v`). node's parseArgs refuses a value that starts with `-` unless
 * it is joined with `=`, but token ids, names and tokens may start with one
 * and must work as printed: whatever follows such an option is its value.
 * Stops at `--`; an option with nothing after it is left for parseArgs to
 * report as missing its value.
 */
export function joinOptionValues(args: readonly string[], spec: OptionSpec): string[] {
  const takesValue = new Map<string, string>();
  for (const [name, option] of Object.entries(spec)) {
    if (option.type === "string") {
      takesValue.set(`--${name}`, name);
      if (option.short !== undefined) {
        takesValue.set(`-${option.short}`, name);
      }
    }
  }
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--") {
      joined.push(...args.slice(i));
      break;
    }
    const name = takesValue.get(arg);
    const value = args[i + 1];
    if (name !== undefined && value !== undefined) {
      joined.push(`--${name}=${value}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** A command line parsed by {@link parseCommandLine}. */
export interface CommandLine<S extends OptionSpec> {
  values: OptionValues<S>;
  /** The arguments that are not options (after `--` too), in order. */
  positionals: string[];
}

function parse<S extends OptionSpec>(
  command: string,
  args: string[],
  spec: S,
  allowPositionals: boolean,
): CommandLine<S> {
  try {
    const { values, positionals } = parseArgs({
      args: joinOptionValues(args, spec),
      options: spec,
      strict: true,
      allowPositionals,
    });
    return { values: values as OptionValues<S>, positionals };
  } catch (err) {
    if (isParseArgsError(err)) {
      // node's text goes on to explain `--` for positionals; its first sentence is what matters.
      throw new UsageError(command, err.message.split(". ")[0] ?? err.message);
    }
    throw err;
  }
}

/**
 * Parses a command's arguments strictly: unknown options and positionals are
 * usage errors; the argument after an option that takes a value is that
 * value, whatever it starts with.
 */
export function parseOptions<S extends OptionSpec>(
  command: string,
  args: string[],
  spec: S,
): OptionValues<S> {
  return parse(command, args, spec, false).values;
}

/**
 * {@link parseOptions} for a command that also takes at most `maxPositionals`
 * arguments that are not options. Too many is a usage error that does not
 * repeat them (one may be a token).
 */
export function parseCommandLine<S extends OptionSpec>(
  command: string,
  args: string[],
  spec: S,
  maxPositionals: number,
): CommandLine<S> {
  const line = parse(command, args, spec, true);
  if (line.positionals.length > maxPositionals) {
    throw new UsageError(
      command,
      `expected at most ${maxPositionals} argument(s), got ${line.positionals.length}`,
    );
  }
  return line;
}

/** The value of a required option, or a usage error naming it. */
export function required(command: string, value: string | undefined, flag: string): string {
  if (value === undefined || value === "") {
    throw new UsageError(command, `${flag} is required`);
  }
  return value;
}

// The flags themselves, not values that look like them (`--name --help`), before any `--`.
function flags(args: readonly string[], spec: OptionSpec): string[] {
  const joined = joinOptionValues(args, spec);
  const end = joined.indexOf("--");
  return end === -1 ? joined : joined.slice(0, end);
}

/** True when the arguments ask for help (`--help` or `-h`, not as an option's value). */
export function wantsHelp(args: readonly string[], spec: OptionSpec): boolean {
  const head = flags(args, spec);
  return head.includes("--help") || head.includes("-h");
}

/** True when the arguments ask for JSON output, so that even a usage error comes as JSON. */
export function wantsJson(args: readonly string[], spec: OptionSpec): boolean {
  return flags(args, spec).includes("--json");
}
