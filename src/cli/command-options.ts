import type { TokenTransport } from "../sdk/token-client.js";
import { UsageError } from "./usage-error.js";

/** Options every command takes. */
export const COMMON_OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Help lines of {@link COMMON_OPTIONS}. */
export const COMMON_HELP = `  --json               print one JSON object on stdout (errors: one on stderr)
  -h, --help           show this help`;

/** Help line of `--transport`. */
export const TRANSPORT_HELP = "  --transport NAME     rest, connect or grpc (default rest)";

/** The `--transport` value: rest (the default), connect or grpc. */
export function transportOption(command: string, value: string | undefined): TokenTransport {
  if (value === undefined || value === "rest" || value === "connect" || value === "grpc") {
    return value ?? "rest";
  }
  throw new UsageError(command, `--transport: must be rest, connect or grpc, not ${value}`);
}

/** The exit-code paragraph of every command's help. */
export const EXIT_CODES_HELP =
  "Exit codes: 0 done, 1 refused by the service (or it could not be reached,\nor a key file could not be read), 2 wrong command line.";
