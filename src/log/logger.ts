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
 * JSON-lines logger. By default lines go to stdout in batches: a write is
 * made once 2 KiB of lines are ready, or after 100 ms, so a busy service
 * makes one write for many requests instead of one per line (per line, the
 * write cost more than everything else the log does). Each write holds whole
 * lines and at most 4 KiB (PIPE_BUF), so WORKERS processes sharing one pipe
 * never interleave inside a line. What is left is written when the process
 * exits.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const options = {
    level: opts.level ?? "info",
    // The pid tells the lines of WORKERS processes apart.
    base: { pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
  };
  return pino(options, opts.destination ?? stdoutBatches());
}

/**
 * stdout, written synchronously in batches. An asynchronous destination
 * leaks under load: it has one write of at most 4 KiB in flight and starts
 * the next from its completion, a turn of the event loop later, while a busy
 * turn answers a hundred calls (20 KiB of lines); the rest queued without
 * bound (issue 40). A synchronous batch cannot queue: a sink slower than
 * the service slows it instead of filling its memory. fd 1 rather than
 * `process.stdout`, which would put a pipe in non-blocking mode (a full pipe
 * would then stall each write for 100 ms instead of until it has room).
 */
function stdoutBatches(): DestinationStream {
  const destination = pino.destination({
    dest: 1,
    sync: true,
    minLength: 2048,
    maxWrite: 4096,
    periodicFlush: 100,
  });
  // pino writes what is left at exit only for an asynchronous destination.
  process.once("exit", () => destination.flushSync());
  return destination;
}
