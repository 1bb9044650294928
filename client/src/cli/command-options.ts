import type { IntrospectionTransport } from "../sdk/introspection-client.js";
import type { TokenTransport } from "../sdk/token-client.js";
import { UsageError } from "./usage-error.js";

/** Options every command takes. */
export const COMMON_OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Help lines of {@link COMMON_OPTIONS}. */
export const COMMON_HELP = `  --json               print the result as one JSON line on stdout (errors: one
                       JSON object on stderr)
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

/** Help line of `--transport` on the internal listener's IntrospectToken (no REST mapping). */
export const INTROSPECTION_TRANSPORT_HELP =
  "  --transport NAME     connect or grpc (default connect)";

/** The `--transport` value of `introspect`: connect (the default) or grpc. */
export function introspectionTransportOption(
  command: string,
  value: string | undefined,
): IntrospectionTransport {
  if (value === undefined || value === "connect" || value === "grpc") {
    return value ?? "connect";
  }
  throw new UsageError(
    command,
    `--transport: must be connect or grpc (IntrospectToken has no REST mapping), not ${value}`,
  );
}

/** The exit-code paragraph of every command's help. */
export const EXIT_CODES_HELP =
  "Exit codes: 0 done, 1 refused by the service (or it could not be reached,\nor a key file could not be read), 2 wrong command line.";
