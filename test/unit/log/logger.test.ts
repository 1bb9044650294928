import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { createLogger } from "../../../src/log/logger.js";

describe("logger", () => {
  it("redacts secrets passed by mistake, at the top level and one level down", () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ destination });
    logger.info(
      {
        token: "pt_secret",
        signature: "ab".repeat(64),
        req: { signature: "cd".repeat(64), privateKey: "k", token: "pt_other" },
        headers: { authorization: "Bearer pt_third" },
        userId: "kept",
      },
      "oops",
    );
    assert.equal(lines.length, 1);
    const line = lines[0] ?? "";
    for (const secret of ["pt_secret", "ab".repeat(64), "cd".repeat(64), "pt_other", "pt_third"]) {
      assert.ok(!line.includes(secret), `${secret} leaked: ${line}`);
    }
    assert.match(line, /"userId":"kept"/);
    assert.match(line, /\[redacted\]/);
  });
});

/**
 * A child process logging through the default destination, stdout being a
 * file: `lines` request lines written in one turn of the event loop (as a
 * busy turn answers a burst of calls), then how much of them had reached the
 * file before the loop could turn, and what it held once the child exited.
 */
function logBurst(lines: number): { beforeTurn: number; atExit: string; expected: number } {
  const dir = mkdtempSync(join(tmpdir(), "perps-logger-"));
  try {
    const out = join(dir, "stdout");
    const fd = openSync(out, "w");
    const logger = pathToFileURL(join(import.meta.dirname, "../../../src/log/logger.ts")).href;
    const script = `
      import { fstatSync, writeSync } from "node:fs";
      import { createLogger } from ${JSON.stringify(logger)};
      const logger = createLogger();
      for (let i = 0; i < ${lines}; i++) logger.info({ requestId: "r-" + i }, "request");
      writeSync(2, String(fstatSync(1).size));
    `;
    const child = spawnSync(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { stdio: ["ignore", fd, "pipe"], encoding: "utf8" },
    );
    closeSync(fd);
    assert.equal(child.status, 0, child.stderr);
    const atExit = readFileSync(out, "utf8");
    const line = atExit.slice(0, atExit.indexOf("\n") + 1);
    return { beforeTurn: Number(child.stderr), atExit, expected: line.length * lines };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("logger's default destination", () => {
  it("writes a burst of lines out as it comes, holding no more than one batch", () => {
    const { beforeTurn, expected } = logBurst(20_000);
    // An asynchronous destination has written one 4 KiB batch by then, and holds the rest.
    assert.ok(
      beforeTurn >= expected - 4096,
      `${beforeTurn} of ${expected} bytes written before the event loop turned`,
    );
  });

  it("writes the batch still held when the process exits", () => {
    const { atExit } = logBurst(3);
    assert.equal(atExit.split("\n").filter((l) => l.includes('"msg":"request"')).length, 3);
  });
});
