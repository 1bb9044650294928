import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../src/log/logger.js";

/** A logger at `level` (default debug) whose lines are kept, each parsed, for a test to read. */
export function keptLogLines(level = "debug"): {
  logger: Logger;
  lines: Record<string, unknown>[];
} {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}
