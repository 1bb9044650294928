import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Redis } from "ioredis";
import { freePorts } from "../../src/process/ports.js";
import { killMainProcesses, startMainProcess, startNpmStart } from "../support/main-process.js";
import { isRunning, redisServersIn, waitUntil } from "../support/process-table.js";
import { tempDirs } from "../support/temp-dirs.js";

/** The first `"pid":N` of a log line with `msg`. */
async function pidOf(run: ReturnType<typeof startMainProcess>, msg: string): Promise<number> {
  const [match] = await run.waitFor(new RegExp(`"pid":(\\d+),[^\\n]*"msg":"${msg}"`));
  return Number(match?.[1]);
}

/** How Node prints a process warning: `(node:1234) [DEP0123] DeprecationWarning: ...`. */
const NODE_WARNING = /\(node:\d+\)|\w+Warning:/;

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
  const temp = tempDirs("perps-start-");
  const tempDir = temp.make;
  const strays: ChildProcess[] = [];
  after(() => {
    // A run whose test failed half-way must not outlive the suite.
    killMainProcesses();
    for (const child of strays) {
      child.kill("SIGKILL");
    }
    temp.removeAll();
  });

  it("runs an embedded redis-server, serves, and stops gracefully on SIGTERM", async () => {
    const cwd = tempDir();
    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0" }, cwd);
    const match = (await run.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/))[0] ?? [];
    const [publicPort, internalPort] = [match[1], match[2]];
    assert.ok(existsSync(join(cwd, ".data/redis/appendonlydir")), "AOF folder");
    assert.equal((await fetch(`http://127.0.0.1:${publicPort}/readyz`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${internalPort}/healthz`)).status, 200);
    // The token console, from the build in dist/console.
    const page = await fetch(`http://127.0.0.1:${publicPort}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script type="module" src="\/console\/console\.js">/);
    assert.equal((await fetch(`http://127.0.0.1:${publicPort}/console/console.js`)).status, 200);
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 0);
    assert.match(run.output(), /"msg":"stopped"/);
    // A runtime warning (deprecation, experimental API) is a defect: none is printed.
    assert.doesNotMatch(run.output(), NODE_WARNING);
    // The embedded server stopped too: its socket is gone.
    assert.equal(existsSync(join(cwd, ".data/redis/redis.sock")), false);
  });

  it("a first start writes JSON lines only, and its ready line (stderr) after them all", async () => {
    const run = startMainProcess(
      { PUBLIC_PORT: "0", INTERNAL_PORT: "0", WORKERS: "2", ADMIN_CREDENTIALS_FILE: "" },
      tempDir(),
      // Both streams into one pipe, so the lines arrive in the order they were written.
      { executable: "sh", args: ["-c", 'exec "$0" "$1" 2>&1', process.execPath] },
    );
    await run.waitFor(/perps-token-service ready/);
    const lines = run
      .output()
      .split("\n")
      .filter((line) => line !== "");
    const ready = lines.findIndex((line) => line.startsWith("perps-token-service ready"));
    const messages = lines.slice(0, ready).map((line) => {
      assert.match(line, /^\{.*\}$/, `not a JSON line: ${line}`);
      return String((JSON.parse(line) as { msg?: unknown }).msg);
    });
    assert.equal(messages.filter((msg) => msg === "listening").length, 2, run.output());
    assert.ok(messages.includes("started workers"), run.output());
    assert.ok(
      messages.some((msg) => msg.startsWith("no ADMIN_CREDENTIALS_FILE: generated operator local")),
      run.output(),
    );
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0);
    for (const line of lines.slice(ready + 1)) {
      assert.match(line, /^\{.*\}$/, `not a JSON line: ${line}`);
    }
  });

  it("CONSOLE=off: no token console", async () => {
    const run = startMainProcess(
      { PUBLIC_PORT: "0", INTERNAL_PORT: "0", CONSOLE: "off" },
      tempDir(),
    );
    const match = (await run.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/))[0] ?? [];
    const page = await fetch(`http://127.0.0.1:${match[1]}/`);
    assert.equal(page.status, 404);
    const [ready] = await run.waitFor(/perps-token-service ready [^\n]*/);
    assert.doesNotMatch(ready?.[0] ?? "", /console/);
    await page.arrayBuffer();
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 0);
  });

  it("exits with a message naming every bad variable, one line each", async () => {
    const run = startMainProcess({ PUBLIC_PORT: "eighty", WORKERS: "many" }, tempDir());
    assert.equal(await run.exited, 2);
    assert.match(
      run.output(),
      /^Configuration error: PUBLIC_PORT must be an integer from 0 to 65535, got "eighty"\nConfiguration error: WORKERS must be an integer from 1 to 256, got "many"\n$/,
    );
  });

  it("still reads HTTP_PORT and GRPC_PORT, saying once (not per worker) that they are deprecated", async () => {
    const [publicPort, internalPort] = await freePorts(2);
    const run = startMainProcess(
      { HTTP_PORT: String(publicPort), GRPC_PORT: String(internalPort), WORKERS: "2" },
      tempDir(),
    );
    await run.waitFor(/perps-token-service ready/);
    assert.equal((await fetch(`http://127.0.0.1:${publicPort}/readyz`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${internalPort}/healthz`)).status, 200);
    const notices = run.output().match(/^.*"deprecated":.*$/gm) ?? [];
    assert.equal(notices.length, 1, run.output());
    assert.match(
      notices[0] ?? "",
      /"level":40,.*"deprecated":\["HTTP_PORT","GRPC_PORT"\],"msg":"HTTP_PORT is deprecated, use PUBLIC_PORT; GRPC_PORT is deprecated, use INTERNAL_PORT \(the old names are removed in the next minor release\)"/,
    );
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 0);
  });

  it("without redis-server on PATH, says how to install one or set REDIS_URL", async () => {
    // A PATH holding node and nothing else.
    const cwd = tempDir();
    const bin = join(cwd, "bin");
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, "node"));
    const run = startMainProcess({ PATH: bin, PUBLIC_PORT: "0", INTERNAL_PORT: "0" }, cwd);
    assert.equal(await run.exited, 1);
    assert.match(run.output(), /redis-server.*REDIS_URL/s);
  });

  for (const { name, signal, group, workers } of [
    {
      name: "SIGTERM to npm's pid (a process manager)",
      signal: "SIGTERM",
      group: false,
      workers: 1,
    },
    { name: "SIGINT to npm's pid", signal: "SIGINT", group: false, workers: 1 },
    {
      name: "Ctrl-C: SIGINT to npm's whole process group",
      signal: "SIGINT",
      group: true,
      workers: 1,
    },
    { name: "Ctrl-C with WORKERS=2", signal: "SIGINT", group: true, workers: 2 },
  ] as const) {
    it(`the real npm start: ${name} stops the service and its Redis, exit 0`, async () => {
      const dir = join(tempDir(), "redis");
      const run = startNpmStart({
        PUBLIC_PORT: "0",
        INTERNAL_PORT: "0",
        EMBEDDED_REDIS_DIR: dir,
        WORKERS: String(workers),
      });
      await run.waitFor(/"msg":"listening"/, workers);
      // One human line once every worker listens: the console's and both listeners' URLs.
      const [ready] = await run.waitFor(
        /perps-token-service ready \((1 process|2 workers)\): console http:\/\/127\.0\.0\.1:(\d+)\/, public API http:\/\/127\.0\.0\.1:(\d+), internal http:\/\/127\.0\.0\.1:(\d+) \(key registration, introspection, \/auth, \/metrics\)\n/,
      );
      assert.equal(ready?.[1], workers === 1 ? "1 process" : "2 workers");
      assert.equal(ready?.[2], ready?.[3]);
      assert.equal((await fetch(`http://127.0.0.1:${ready?.[2]}/readyz`)).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${ready?.[4]}/healthz`)).status, 200);
      assert.equal([...run.output().matchAll(/perps-token-service ready/g)].length, 1);
      const servicePid = await pidOf(run, "started embedded redis-server");
      const workerPids = (await run.waitFor(/"pid":(\d+),[^\n]*"msg":"listening"/, workers)).map(
        (match) => Number(match[1]),
      );
      const [redisPid] = redisServersIn(dir);
      assert.ok(redisPid !== undefined, "an embedded redis-server runs on the folder");
      const npmPid = run.child.pid ?? 0;
      assert.notEqual(servicePid, npmPid, "the service is npm's child");
      // Compiled code under plain node: nothing compiles TypeScript at start.
      const argv = readFileSync(`/proc/${servicePid}/cmdline`, "utf8").split("\0");
      assert.deepEqual(argv.slice(1), ["dist/main.js", ""]);
      process.kill(group ? -npmPid : npmPid, signal);
      // npm exits 0: the service it runs stopped cleanly (npm re-raises the signal only when its child died of it).
      assert.equal(await run.exitedWithin(), 0, run.output());
      await waitUntil(
        () => ![servicePid, ...workerPids, redisPid].some(isRunning),
        () => `a process still runs: ${[servicePid, ...workerPids, redisPid].filter(isRunning)}`,
      );
      // Each process stopped once; no worker was replaced on the way out.
      const stops = workers === 1 ? 1 : workers + 1;
      assert.equal(
        [...run.output().matchAll(/"msg":"shutting down"/g)].length,
        stops,
        run.output(),
      );
      assert.equal([...run.output().matchAll(/"msg":"stopped"/g)].length, stops, run.output());
      assert.doesNotMatch(run.output(), /shutdown failed|worker died/);
      assert.doesNotMatch(run.output(), NODE_WARNING);
      // Redis stopped gracefully: it removed its socket.
      assert.equal(existsSync(join(dir, "redis.sock")), false);
    });
  }

  it("kill -9 of the service: its embedded redis-server exits gracefully with it", async () => {
    const cwd = tempDir();
    const dir = join(cwd, ".data/redis");
    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0" }, cwd);
    await run.waitFor(/"msg":"listening"/);
    const [redisPid] = redisServersIn(dir);
    assert.ok(redisPid !== undefined, "an embedded redis-server runs on the folder");
    run.child.kill("SIGKILL");
    await run.exitedWithin();
    await waitUntil(
      () => !isRunning(redisPid),
      () => `redis-server ${redisPid} outlived its service`,
      3000,
    );
    assert.equal(existsSync(join(dir, "redis.sock")), false, "SIGTERM, not a crash: socket gone");
  });

  it("the embedded redis-server crashing: the service logs it, keeps serving, and stops cleanly", async () => {
    const dir = join(tempDir(), "redis");
    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dir });
    const [match] = await run.waitFor(/"publicPort":(\d+)/);
    const [redisPid] = redisServersIn(dir);
    assert.ok(redisPid !== undefined, "an embedded redis-server runs on the folder");
    process.kill(redisPid, "SIGKILL");
    await run.waitFor(/"level":50,[^\n]*"msg":"embedded redis-server exited"/);
    assert.equal(await statusOf(`http://127.0.0.1:${match?.[1]}/healthz`), 200);
    assert.equal(await statusOf(`http://127.0.0.1:${match?.[1]}/readyz`), 503);
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0, run.output());
  });

  it("a redis-server left on the data folder is shut down first: one server, data kept", async () => {
    const dir = join(tempDir(), "redis");
    mkdirSync(dir, { recursive: true });
    const socket = join(dir, "redis.sock");
    // Detached as an orphan of the old code would be, on the same folder, socket and pidfile.
    const stale = spawn(
      "redis-server",
      [
        ...["--dir", dir, "--port", "0", "--unixsocket", socket, "--unixsocketperm", "700"],
        ...["--pidfile", join(dir, "redis.pid")],
        ...["--save", "", "--appendonly", "yes", "--maxmemory-policy", "noeviction"],
      ],
      { detached: true, stdio: "ignore" },
    );
    strays.push(stale);
    stale.unref();
    await waitUntil(
      () => existsSync(socket),
      () => "the stale redis-server did not start",
    );
    const before = new Redis({ path: socket });
    await before.set("kept", "yes");
    before.disconnect();

    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dir });
    await run.waitFor(/"msg":"listening"/);
    await waitUntil(
      () => !isRunning(stale.pid ?? 0),
      () => "the stale redis-server still runs",
    );
    const servers = redisServersIn(dir);
    assert.equal(servers.length, 1, `one redis-server on the folder: ${servers.join(", ")}`);
    assert.match(run.output(), /"msg":"stopped a redis-server left on the embedded folder"/);
    const after = new Redis({ path: socket });
    try {
      assert.equal(
        await after.get("kept"),
        "yes",
        "the stale server flushed its AOF on the way out",
      );
    } finally {
      after.disconnect();
    }
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0);
  });

  it("a redis-server on the folder that is not proven an orphan (no pidfile of its own) is never stopped: the start refuses", async () => {
    const dir = join(tempDir(), "redis");
    mkdirSync(dir, { recursive: true });
    const socket = join(dir, "redis.sock");
    // Another service's Redis (or one started by hand) on this folder: no pidfile here names it.
    const other = spawn(
      "redis-server",
      [...["--dir", dir, "--port", "0", "--unixsocket", socket], ...["--save", ""]],
      { detached: true, stdio: "ignore" },
    );
    strays.push(other);
    other.unref();
    await waitUntil(
      () => existsSync(socket),
      () => "the other redis-server did not start",
    );
    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dir });
    assert.equal(await run.exitedWithin(15_000), 1, run.output());
    assert.match(
      run.output(),
      new RegExp(`a redis-server that this service did not start .* answers on ${socket}; stop it`),
    );
    assert.doesNotMatch(run.output(), /stopped a redis-server/);
    assert.ok(isRunning(other.pid ?? 0), "the other redis-server runs on");
    assert.deepEqual(redisServersIn(dir), [other.pid]);
    other.kill("SIGTERM");
  });

  it("a stale redis-server whose socket was deleted is found by its pidfile and stopped", async () => {
    const dir = join(tempDir(), "redis");
    mkdirSync(dir, { recursive: true });
    const socket = join(dir, "redis.sock");
    const stale = spawn(
      "redis-server",
      [
        ...[
          "--dir",
          dir,
          "--port",
          "0",
          "--unixsocket",
          socket,
          "--pidfile",
          join(dir, "redis.pid"),
        ],
        ...["--save", "", "--appendonly", "yes"],
      ],
      { detached: true, stdio: "ignore" },
    );
    strays.push(stale);
    stale.unref();
    await waitUntil(
      () => existsSync(socket) && existsSync(join(dir, "redis.pid")),
      () => "the stale redis-server did not start",
    );
    // What a second server on the folder does to the first one's socket.
    rmSync(socket);
    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dir });
    await run.waitFor(/"msg":"listening"/);
    await waitUntil(
      () => !isRunning(stale.pid ?? 0),
      () => "the stale redis-server still runs",
    );
    assert.deepEqual(redisServersIn(dir).length, 1);
    assert.match(run.output(), /"via":"pidfile","redisPid":\d+,"msg":"stopped a redis-server left/);
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0);
  });

  it("a pidfile naming a redis-server of another folder is left alone", async () => {
    const other = join(tempDir(), "other");
    mkdirSync(other);
    const foreign = spawn(
      "redis-server",
      ["--dir", other, "--port", "0", "--unixsocket", join(other, "redis.sock"), "--save", ""],
      { stdio: "ignore" },
    );
    strays.push(foreign);
    await waitUntil(
      () => existsSync(join(other, "redis.sock")),
      () => "the other redis-server did not start",
    );
    const dir = join(tempDir(), "redis");
    mkdirSync(dir);
    // A stale pidfile whose pid was reused by a redis-server of another folder.
    writeFileSync(join(dir, "redis.pid"), `${foreign.pid}\n`);
    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dir });
    await run.waitFor(/"msg":"listening"/);
    assert.ok(isRunning(foreign.pid ?? 0), "the other folder's redis-server still runs");
    assert.equal(redisServersIn(dir).length, 1);
    // The new server wrote its own pid over the stale one.
    assert.notEqual(readFileSync(join(dir, "redis.pid"), "utf8").trim(), String(foreign.pid));
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0);
    foreign.kill("SIGTERM");
  });

  it("HOST binds the public listener only; the internal one stays on INTERNAL_HOST (127.0.0.1)", async () => {
    const run = startMainProcess(
      { HOST: "127.0.0.2", PUBLIC_PORT: "0", INTERNAL_PORT: "0" },
      tempDir(),
    );
    const [match] = await run.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
    const [publicPort, internalPort] = [match?.[1], match?.[2]];
    assert.match(run.output(), /"host":"127.0.0.2","internalHost":"127.0.0.1"/);
    assert.equal(await statusOf(`http://127.0.0.2:${publicPort}/healthz`), 200);
    assert.equal(await statusOf(`http://127.0.0.2:${internalPort}/healthz`), "ECONNREFUSED");
    assert.equal(await statusOf(`http://127.0.0.1:${internalPort}/healthz`), 200);
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 0);
  });
});
