import { type DestinationStream, type Logger, pino } from "pino";

/** The fields of an answered request's line (see answer-telemetry.ts). */
export interface RequestLineFields {
  method: string;
  protocol: string;
  requestId: string;
  /** The code's name ("ok", "Unavailable", …). */
  code: string;
  ms: number;
}

/** Writes the `info` line "request" of an answer that needs no more fields than these. */
export type RequestLineWriter = (fields: RequestLineFields) => void;

/** The parts of a pino logger that pino itself uses to write a line. */
interface PinoInternals {
  [pino.symbols.streamSym]: DestinationStream;
  [pino.symbols.chindingsSym]: string;
  [pino.symbols.timeSym]: () => string;
}

const INFO = 30;

/**
 * The line `logger.info(fields, "request")` writes, built as one string and
 * handed to the logger's own destination: the same bytes (a test holds them
 * to pino's), for about half of pino's CPU per line. Every answer writes one,
 * so it is the only line worth this. Its strings are JSON-escaped like pino's;
 * no field can hold a secret, so redaction has nothing to do.
 */
export function createRequestLineWriter(logger: Logger): RequestLineWriter {
  const internals = logger as unknown as PinoInternals;
  const stream = internals[pino.symbols.streamSym];
  const bindings = internals[pino.symbols.chindingsSym];
  const time = internals[pino.symbols.timeSym];
  return (fields) => {
    if (logger.levelVal > INFO) {
      return;
    }
    stream.write(
      `{"level":${INFO}${time()}${bindings},"method":${JSON.stringify(fields.method)},"protocol":${JSON.stringify(fields.protocol)},"requestId":${JSON.stringify(fields.requestId)},"code":${JSON.stringify(fields.code)},"ms":${fields.ms},"msg":"request"}\n`,
    );
  };
}
