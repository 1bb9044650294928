import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger } from "pino";

export interface LoggerOptions {
  /** pino level name: fatal, error, warn, info, debug, trace or silent. Default "info". */
  level?: string;
  /** Where JSON lines go. Default stdout. */
  destination?: DestinationStream;
}

/**
 * Paths redacted wherever they appear in a log object. Secrets are never
 * logged on purpose; this is the safety net if one is passed by mistake.
 */
export const REDACTED_PATHS = [
  "token",
  "signature",
  "privateKey",
  "secretKey",
  "*.token",
  "*.signature",
  "*.privateKey",
  "*.secretKey",
  "authorization",
  "cookie",
  "*.authorization",
  "*.cookie",
  "*.headers.authorization",
  "*.headers.cookie",
];

/** JSON-lines logger. */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const options = {
    level: opts.level ?? "info",
    // The pid tells the lines of WORKERS processes apart.
    base: { pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
  };
  return opts.destination === undefined ? pino(options) : pino(options, opts.destination);
}
