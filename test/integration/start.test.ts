import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");
const MAIN = join(ROOT, "src/main.ts");

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs `npm start`'s command in a fresh folder, as a newcomer would. */
function startService(cwd: string, env: Record<string, string>): Run {
  const child = spawn(process.execPath, [TSX, MAIN], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const run = { child, output: () => output, exited };
  runs.push(run);
  return run;
}

async function waitForLine(
  run: Run,
  pattern: RegExp,
  timeoutMs: number,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = run.output().match(pattern);
    if (match !== null) {
      return match;
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  assert.fail(`no line matching ${pattern} within ${timeoutMs} ms:\n${run.output()}`);
}

const runs: Run[] = [];

describe("npm start", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "perps-start-"));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    // A run whose test failed half-way must not outlive the suite.
    for (const run of runs) {
      run.child.kill("SIGKILL");
    }
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs an embedded redis-server, serves, and stops gracefully on SIGTERM", async () => {
    const cwd = tempDir();
    const run = startService(cwd, { HTTP_PORT: "0", GRPC_PORT: "0" });
    const match = await waitForLine(run, /"httpPort":(\d+),"grpcPort":(\d+)/, 15_000);
    const [httpPort, grpcPort] = [match[1], match[2]];
    assert.ok(existsSync(join(cwd, ".data/redis/appendonlydir")), "AOF folder");
    assert.equal((await fetch(`http://127.0.0.1:${httpPort}/readyz`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${grpcPort}/healthz`)).status, 200);
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 0);
    assert.match(run.output(), /"msg":"stopped"/);
    // The embedded server stopped too: its socket is gone.
    assert.equal(existsSync(join(cwd, ".data/redis/redis.sock")), false);
  });

  it("exits with a message naming a bad variable", async () => {
    const run = startService(tempDir(), { HTTP_PORT: "eighty" });
    assert.equal(await run.exited, 2);
    assert.match(run.output(), /HTTP_PORT must be an integer/);
  });

  it("without redis-server on PATH, says how to install one or set REDIS_URL", async () => {
    // A PATH holding node and nothing else.
    const cwd = tempDir();
    const bin = join(cwd, "bin");
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, "node"));
    const run = startService(cwd, { PATH: bin, HTTP_PORT: "0", GRPC_PORT: "0" });
    assert.equal(await run.exited, 1);
    assert.match(run.output(), /redis-server.*REDIS_URL/s);
  });
});
