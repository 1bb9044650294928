import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";

/** GET `url`'s status, or the error code when the connection fails. */
async function statusOf(url: string): Promise<number | string> {
  try {
    return (await fetch(url)).status;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    return cause?.code ?? String(err);
  }
}

describe("npm start", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "perps-start-"));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    // A run whose test failed half-way must not outlive the suite.
    killMainProcesses();
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs an embedded redis-server, serves, and stops gracefully on SIGTERM", async () => {
    const cwd = tempDir();
    const run = startMainProcess({ HTTP_PORT: "0", GRPC_PORT: "0" }, cwd);
    const match = (await run.waitFor(/"httpPort":(\d+),"grpcPort":(\d+)/))[0] ?? [];
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
    const run = startMainProcess({ HTTP_PORT: "eighty" }, tempDir());
    assert.equal(await run.exited, 2);
    assert.match(run.output(), /HTTP_PORT must be an integer/);
  });

  it("without redis-server on PATH, says how to install one or set REDIS_URL", async () => {
    // A PATH holding node and nothing else.
    const cwd = tempDir();
    const bin = join(cwd, "bin");
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, "node"));
    const run = startMainProcess({ PATH: bin, HTTP_PORT: "0", GRPC_PORT: "0" }, cwd);
    assert.equal(await run.exited, 1);
    assert.match(run.output(), /redis-server.*REDIS_URL/s);
  });

  it("HOST binds the public listener only; the internal one stays on INTERNAL_HOST (127.0.0.1)", async () => {
    const run = startMainProcess({ HOST: "127.0.0.2", HTTP_PORT: "0", GRPC_PORT: "0" }, tempDir());
    const [match] = await run.waitFor(/"httpPort":(\d+),"grpcPort":(\d+)/);
    const [httpPort, grpcPort] = [match?.[1], match?.[2]];
    assert.match(run.output(), /"host":"127.0.0.2","internalHost":"127.0.0.1"/);
    assert.equal(await statusOf(`http://127.0.0.2:${httpPort}/healthz`), 200);
    assert.equal(await statusOf(`http://127.0.0.2:${grpcPort}/healthz`), "ECONNREFUSED");
    assert.equal(await statusOf(`http://127.0.0.1:${grpcPort}/healthz`), 200);
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 0);
  });
});
