import { Code, type ConnectError } from "@connectrpc/connect";

// Codes that point at our side rather than at the caller.
const SERVER_FAULTS: ReadonlySet<Code> = new Set([
  Code.Internal,
  Code.Unknown,
  Code.Unavailable,
  Code.DataLoss,
]);

/**
 * Whether an answer with `code` is our failure rather than the caller's: the
 * one rule of the log's level, the trace's error flag and the failure's
 * logged words, whoever answers.
 */
export function isServerFault(code: Code): boolean {
  return SERVER_FAULTS.has(code);
}

/**
 * What the log says of an error answer: for our own failure its cause, which
 * is never sent to the client; else what the client was told.
 */
export function loggedMessage(error: ConnectError): string {
  return isServerFault(error.code) ? String(error.cause ?? error.rawMessage) : error.rawMessage;
}
