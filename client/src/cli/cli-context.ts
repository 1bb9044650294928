import type { ExitCode } from "./exit-code.js";
import type { OptionSpec } from "./parse-options.js";

/** Where a command writes and what it reads from its environment, so runs are testable. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
}

/** What a command runs with: its io and the output mode chosen on its command line. */
export interface CliContext extends CliIo {
  /** True with `--json`: one JSON line on stdout instead of text. */
  json: boolean;
}

/** One subcommand of perps-tokens. */
export interface Command {
  readonly name: string;
  /** The listener it calls (for the hint when a URL names the wrong one); keygen calls none. */
  readonly listener: "public" | "internal" | undefined;
  /** One line, for the top-level help. */
  readonly summary: string;
  /** The full `--help` text. */
  readonly help: string;
  /** Its options, so that `--help` and `--json` are told apart from values that look like them. */
  readonly options: OptionSpec;
  /** Resolves with the exit code: Ok, or another when the answer itself means "no" (introspect). */
  run(args: string[], ctx: CliContext): Promise<ExitCode>;
}
