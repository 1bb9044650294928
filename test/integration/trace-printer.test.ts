import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { markdownBlocks, REPO_ROOT } from "../support/markdown-blocks.js";
import { tempDirs } from "../support/temp-dirs.js";

// docs/logs-and-metrics.md's way to see spans without a container engine, run as
// printed: scripts/trace-printer.ts, the service started with the documented OTEL_*
// variables pointing at it, the documented curl's traceparent, and the printed line
// compared with the documented one.

const DOC = "docs/logs-and-metrics.md";
const DOCUMENTED_ADDRESS = "127.0.0.1:4318";

interface Documented {
  /** The printer's command words (`npx tsx scripts/trace-printer.ts`). */
  readonly printer: string[];
  /** The variables `npm start` is given. */
  readonly env: Record<string, string>;
  /** The traceparent of the documented curl to the internal listener's /auth. */
  readonly traceparent: string;
  /** The line the printer shows for that call. */
  readonly line: string;
}

function documented(): Documented {
  const texts = markdownBlocks(DOC)
    .filter((block) => block.lang === "text")
    .map((block) => block.text);
  const commands = texts.find((text) => text.includes("scripts/trace-printer.ts"));
  assert.ok(commands !== undefined, `${DOC}: no block running scripts/trace-printer.ts`);
  const [printerLine = "", startLine = ""] = commands.split("\n");
  const start = startLine.split(" ");
  assert.deepEqual(start.slice(-2), ["npm", "start"], startLine);
  const env = Object.fromEntries(
    start.slice(0, -2).map((assignment) => {
      const [name = "", ...value] = assignment.split("=");
      return [name, value.join("=")];
    }),
  );
  const line = texts.find((text) => text.includes('"GET /auth"'))?.trim();
  assert.ok(line !== undefined, `${DOC}: no printed span of GET /auth`);
  const curl = /curl -H 'traceparent: ([0-9a-f-]+)' http:\/\/127\.0\.0\.1:9090\/auth/.exec(
    readFileSync(join(REPO_ROOT, DOC), "utf8"),
  );
  assert.ok(curl?.[1] !== undefined, `${DOC}: no curl with a traceparent to /auth`);
  const printer = (printerLine.split("#")[0] ?? "").trim().split(" ");
  return { printer, env, traceparent: curl[1], line };
}

/** A printed span line's parts that do not vary from run to run, and its attributes' names. */
function stableParts(line: string): { head: string[]; attributes: string[] } {
  const fields = line.split(" ");
  const ms = fields.indexOf("ms");
  assert.ok(ms > 0, `not a span line: ${line}`);
  return {
    // trace id, "<", parent id, kind, name (the span id and the duration vary).
    head: [fields[0] ?? "", ...fields.slice(2, ms - 1)],
    attributes: fields.slice(ms + 1).map((attribute) => attribute.split("=")[0] ?? ""),
  };
}

describe("docs/logs-and-metrics.md's trace printer, without a container engine", () => {
  const temp = tempDirs("perps-trace-printer-");
  let printer: ChildProcess | undefined;
  after(() => {
    killMainProcesses();
    if (printer?.exitCode === null && printer.signalCode === null) {
      printer.kill("SIGKILL");
    }
    temp.removeAll();
  });

  it("prints the span of a call as the document shows it", async () => {
    const doc = documented();
    // `npx tsx` runs the repository's tsx; on a free port rather than 4318.
    assert.deepEqual(doc.printer, ["npx", "tsx", "scripts/trace-printer.ts"]);
    const running = spawn(
      join(REPO_ROOT, "node_modules", ".bin", "tsx"),
      [...doc.printer.slice(2), "--port", "0"],
      { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    printer = running;
    let stdout = "";
    let stderr = "";
    running.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    running.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const until = async (ready: () => boolean, what: string) => {
      const deadline = Date.now() + 20_000;
      while (!ready()) {
        assert.ok(Date.now() < deadline, `no ${what}; printer said:\n${stdout}${stderr}`);
        await new Promise((done) => setTimeout(done, 50));
      }
    };
    await until(() => /http:\/\/127\.0\.0\.1:\d+/.test(stderr), "printer address");
    const address = /http:\/\/(127\.0\.0\.1:\d+)/.exec(stderr)?.[1] ?? "";

    const env = Object.fromEntries(
      Object.entries(doc.env).map(([name, value]) => [
        name,
        value.replace(DOCUMENTED_ADDRESS, address),
      ]),
    );
    assert.ok(
      Object.values(env).some((value) => value.includes(address)),
      "an endpoint at the printer",
    );
    const service = startMainProcess(
      { ...env, PUBLIC_PORT: "0", INTERNAL_PORT: "0", WORKERS: "1" },
      temp.make(),
    );
    const [match] = await service.waitFor(/"internalPort":(\d+)/);
    const answer = await fetch(`http://127.0.0.1:${match?.[1]}/auth`, {
      headers: { traceparent: doc.traceparent },
    });
    assert.equal(answer.status, 401);

    const traceId = doc.traceparent.split("-")[1] ?? "";
    const printed = () =>
      stdout.split("\n").find((line) => line.startsWith(traceId) && line.includes('"GET /auth"'));
    await until(() => printed() !== undefined, "span of GET /auth");
    assert.deepEqual(stableParts(printed() ?? ""), stableParts(doc.line));

    service.child.kill("SIGTERM");
    assert.equal(await service.exitedWithin(15_000), 0);
    const exited = new Promise((done) => running.once("exit", (code) => done(code)));
    running.kill("SIGTERM");
    assert.equal(await exited, 0);
  });
});
