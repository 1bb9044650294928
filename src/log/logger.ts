import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger } from "pino";

export interface LoggerOptions {
  /** pino level name: fatal, error, warn, info, debug, trace or silent. Default "info". */
  level?: string;
  /** Where JSON lines go. Default stdout, written asynchronously (see `createLogger`). */
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

/**
 * JSON-lines logger. By default lines go to stdout in batches: a line waits
 * until 2 KiB of lines are ready or 100 ms have passed, so a busy service
 * makes one write for many requests instead of one per line (per line, the
 * write cost more than everything else the log does). Each write holds whole
 * lines and at most 4 KiB (PIPE_BUF), so WORKERS processes sharing one pipe
 * never interleave inside a line; pino writes what is left when the process
 * exits.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const options = {
    level: opts.level ?? "info",
    // The pid tells the lines of WORKERS processes apart.
    base: { pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
  };
  return pino(
    options,
    opts.destination ??
      pino.destination({ sync: false, minLength: 2048, maxWrite: 4096, periodicFlush: 100 }),
  );
}
