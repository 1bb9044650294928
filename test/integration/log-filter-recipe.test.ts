import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, describe, it } from "node:test";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { markdownBlocks } from "../support/markdown-blocks.js";
import { tempDirs } from "../support/temp-dirs.js";

// docs/logs-and-metrics.md's jq filter ("warnings, errors and refused calls only"), run
// as printed on what a real `npm start` writes to stdout: its start-up lines, the lines of
// served and refused calls, and its stop.

const RECIPE = /^npm start \| jq -rc '([^']+)'$/m;

function documentedFilter(): string {
  for (const block of markdownBlocks("docs/logs-and-metrics.md")) {
    const match = RECIPE.exec(block.text);
    if (match?.[1] !== undefined) {
      return match[1];
    }
  }
  assert.fail("docs/logs-and-metrics.md has no `npm start | jq -rc '…'` line");
}

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly code?: unknown;
}

describe("the documented jq filter of the log", () => {
  const temp = tempDirs("perps-log-filter-");
  after(() => {
    killMainProcesses();
    temp.removeAll();
  });

  it("passes warnings and refused calls, never start-up lines or served calls", async () => {
    const run = startMainProcess(
      { PUBLIC_PORT: "0", INTERNAL_PORT: "0", WORKERS: "2" },
      temp.make(),
    );
    let stdout = "";
    run.child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const match = (await run.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/))[0] ?? [];
    const [publicPort, internalPort] = [match[1], match[2]];
    await run.waitFor(/perps-token-service ready/);
    // Served: probes (logged at debug) and a call logged at info.
    assert.equal((await fetch(`http://127.0.0.1:${publicPort}/healthz`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${internalPort}/readyz`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${publicPort}/openapi.json`)).status, 200);
    // Refused: no bearer token, and an unknown path.
    assert.equal((await fetch(`http://127.0.0.1:${publicPort}/user/tokens`)).status, 401);
    assert.equal((await fetch(`http://127.0.0.1:${publicPort}/no-such-path`)).status, 404);
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(15_000), 0);

    const lines = stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as LogLine);
    const notCalls = lines.filter((line) => typeof line.code !== "string" && line.level < 40);
    assert.ok(notCalls.length >= 3, `start-up and stop lines read: ${notCalls.length}`);
    assert.ok(lines.some((line) => line.code === "ok"));
    const wanted = lines.filter(
      (line) => line.level >= 40 || (typeof line.code === "string" && line.code !== "ok"),
    );
    assert.ok(wanted.length >= 2, "the refused calls' lines");

    const jq = spawnSync("jq", ["-rc", documentedFilter()], { input: stdout, encoding: "utf8" });
    assert.equal(jq.status, 0, jq.stderr);
    const shown = jq.stdout.split("\n").filter((line) => line !== "");
    // @tsv's second column is the line's msg, its fourth its code.
    assert.deepEqual(
      shown.map((line) => line.split("\t").slice(1, 4)),
      wanted.map((line) => [line.msg, text(line, "method"), text(line, "code")]),
    );
  });
});

/** A field as @tsv writes it: text as it is, a number in decimal, nothing for none. */
function text(line: LogLine, field: string): string {
  const value = (line as unknown as Record<string, unknown>)[field];
  return typeof value === "string" || typeof value === "number" ? String(value) : "";
}
