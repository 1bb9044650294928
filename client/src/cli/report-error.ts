import { Code } from "@connectrpc/connect";
import { durationText } from "../protocol/duration-text.js";
import { NO_SUCH_RESOURCE } from "../protocol/no-such-resource.js";
import { TokenApiError } from "../sdk/token-api-error.js";
import { TransportUnavailableError } from "../sdk/transport-unavailable-error.js";
import type { CliIo } from "./cli-context.js";
import { CliFailure } from "./cli-failure.js";
import { ExitCode } from "./exit-code.js";
import {
  DEFAULT_INTERNAL_URL,
  DEFAULT_PUBLIC_URL,
  INTERNAL_URL_ENV,
  PUBLIC_URL_ENV,
} from "./service-urls.js";
import { UsageError } from "./usage-error.js";

/** The CLI's name in messages. */
export const CLI_NAME = "perps-tokens";

interface ErrorReport {
  exitCode: ExitCode;
  /** "usage", "service" (the service refused, or could not be reached) or "local". */
  kind: "usage" | "service" | "local";
  text: string;
  fields: Record<string, unknown>;
}

// A replayed create that had been accepted (its first answer lost): the token
// exists, its secret is gone, and its name stays taken until it is deleted.
function createdTokenHint(err: TokenApiError): string {
  const id = err.createdTokenId;
  if (id === undefined) {
    return "";
  }
  return (
    `\nThis request had already been accepted: it created token ${id}, whose secret cannot be` +
    ` shown again.\nTo free its name, delete it: ${CLI_NAME} delete --user USER_ID --key FILE` +
    ` --token-id ${id}`
  );
}

// "Signature expired": which way this machine's clock is off, from the service's details.
function clockHint(err: TokenApiError): string {
  const offset = err.clockOffsetMs;
  if (offset === undefined || err.serverTimeMs === undefined) {
    return "";
  }
  const way = offset > 0 ? "ahead of" : "behind";
  return (
    `\nThis machine's clock is ${durationText(offset)} ${way} the service's` +
    ` (${new Date(err.serverTimeMs).toISOString()}): set it right and try again.`
  );
}

// The URL answered, but it is not the listener that serves this command: UNIMPLEMENTED for an
// RPC it does not serve (the public one has no key registration or introspection), a 404 for a
// REST path (the internal one has no /user/tokens).
function listenerHint(err: TokenApiError, listener: "public" | "internal" | undefined): string {
  const otherListener =
    err.code === Code.Unimplemented ||
    (err.code === Code.NotFound && err.message === NO_SUCH_RESOURCE);
  if (!otherListener || listener === undefined) {
    return "";
  }
  return listener === "internal"
    ? `\nThis command calls the internal listener: is the URL the service's internal one? (--internal-url, $${INTERNAL_URL_ENV}, default ${DEFAULT_INTERNAL_URL})`
    : `\nThis command calls the public listener: is the URL the service's public one? (--url, $${PUBLIC_URL_ENV}, default ${DEFAULT_PUBLIC_URL})`;
}

function describe(err: unknown, listener: "public" | "internal" | undefined): ErrorReport {
  if (err instanceof UsageError) {
    const help =
      err.command === undefined ? `${CLI_NAME} --help` : `${CLI_NAME} ${err.command} --help`;
    const where = err.command === undefined ? CLI_NAME : `${CLI_NAME} ${err.command}`;
    return {
      exitCode: ExitCode.Usage,
      kind: "usage",
      text: `${where}: ${err.message}\nRun '${help}' for usage.`,
      fields: { message: err.message },
    };
  }
  if (err instanceof TokenApiError) {
    const http = err.httpStatus === undefined ? "" : ` (HTTP ${err.httpStatus})`;
    const retry =
      err.retryAfterSeconds === undefined ? "" : `; retry after ${err.retryAfterSeconds} s`;
    return {
      exitCode: ExitCode.Refused,
      kind: "service",
      text: `${CLI_NAME}: ${err.codeName}${http}: ${err.message}${retry}${createdTokenHint(err)}${clockHint(err)}${listenerHint(err, listener)}`,
      fields: {
        code: err.code,
        codeName: err.codeName,
        message: err.message,
        ...(err.httpStatus === undefined ? {} : { httpStatus: err.httpStatus }),
        ...(err.retryAfterSeconds === undefined
          ? {}
          : { retryAfterSeconds: err.retryAfterSeconds }),
        ...(err.createdTokenId === undefined ? {} : { createdTokenId: err.createdTokenId }),
        ...(err.clockOffsetMs === undefined ? {} : { clockOffsetMs: err.clockOffsetMs }),
        ...(err.serverTimeMs === undefined ? {} : { serverTimeMs: err.serverTimeMs }),
      },
    };
  }
  // CliFailure is expected (a key file), and so is a transport that cannot run
  // here (it says what to install); anything else is a bug, still reported in
  // one line rather than a stack, which could hold key material.
  const message = err instanceof Error ? err.message : String(err);
  const expected = err instanceof CliFailure || err instanceof TransportUnavailableError;
  return {
    exitCode: ExitCode.Refused,
    kind: "local",
    text: `${CLI_NAME}: ${expected ? "" : "unexpected error: "}${message}`,
    fields: { message },
  };
}

/**
 * Writes an error to stderr (text, or one JSON line `{"error": {...}}` with
 * `--json`) and returns the exit code it means.
 */
export function reportError(
  err: unknown,
  io: CliIo,
  json: boolean,
  listener?: "public" | "internal",
): ExitCode {
  const report = describe(err, listener);
  io.stderr(
    json
      ? `${JSON.stringify({ error: { kind: report.kind, ...report.fields } })}\n`
      : `${report.text}\n`,
  );
  return report.exitCode;
}
