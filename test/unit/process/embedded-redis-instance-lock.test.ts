import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import {
  acquireInstanceLock,
  LOCK_FILE,
  LOCK_SOCKET_FILE,
} from "../../../src/process/embedded-redis.js";

const MODULE = resolve(import.meta.dirname, "../../../src/process/embedded-redis.ts");

/**
 * Another process that takes the folder's lock and keeps it until killed,
 * with this title (what `ps` and /proc/<pid>/comm show).
 */
async function holder(dir: string, title: string): Promise<ChildProcess> {
  const script = `process.title = ${JSON.stringify(title)};
const { acquireInstanceLock } = await import(${JSON.stringify(MODULE)});
const lock = await acquireInstanceLock({ dir: ${JSON.stringify(dir)} });
console.log(lock.held ? "held" : "not held");
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
  assert.equal(line.toString().trim(), "held");
  return child;
}

describe("acquireInstanceLock", () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "perps-lock-"));
    dirs.push(dir);
    return join(dir, "redis");
  };
  after(() => {
    for (const child of children) {
      child.kill("SIGKILL");
    }
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("takes a free folder's lock, writes its pid for people, and releases it", async () => {
    const dir = tempDir();
    const lock = await acquireInstanceLock({ dir });
    assert.equal(lock.held, true);
    assert.equal(readFileSync(join(dir, LOCK_FILE), "utf8"), `${process.pid}\n`);
    assert.deepEqual(
      readdirSync(dir).sort(),
      [LOCK_FILE, LOCK_SOCKET_FILE],
      "nothing else on disk",
    );
    // Held: a second taker in the same process is told, with the owner's pid.
    const again = await acquireInstanceLock({ dir });
    assert.deepEqual(again.held ? "held" : again.ownerPid, process.pid);
    if (lock.held) {
      lock.release();
    }
    assert.deepEqual(readdirSync(dir), [], "both gone once released");
    const after = await acquireInstanceLock({ dir });
    assert.equal(after.held, true, "free again once released");
    if (after.held) {
      after.release();
    }
  });

  it("a folder whose path is longer than a socket address (108 bytes), reached through a symlink too", async () => {
    const dir = join(tempDir(), "a-long-folder-name-".repeat(6), "redis");
    assert.ok(Buffer.byteLength(join(dir, LOCK_SOCKET_FILE)) > 108);
    const lock = await acquireInstanceLock({ dir });
    assert.equal(lock.held, true);
    const link = join(tmpdir(), `perps-lock-link-${process.pid}`);
    symlinkSync(dir, link);
    try {
      const viaLink = await acquireInstanceLock({ dir: link });
      assert.deepEqual(viaLink.held ? "held" : viaLink.ownerPid, process.pid);
    } finally {
      rmSync(link);
      if (lock.held) {
        lock.release();
      }
    }
  });

  it("an owner with another title (nodejs, a custom process.title) is alive: never taken", async () => {
    for (const title of ["nodejs", "perps-tokens-primary"]) {
      const dir = tempDir();
      const owner = await holder(dir, title);
      children.push(owner);
      const lock = await acquireInstanceLock({ dir });
      assert.deepEqual(lock.held ? "held" : lock.ownerPid, owner.pid, title);
      // Even with the lock file pointing elsewhere: the socket is the lock.
      writeFileSync(join(dir, LOCK_FILE), "1\n");
      const again = await acquireInstanceLock({ dir });
      assert.deepEqual(again.held ? "held" : again.ownerPid, owner.pid);
      owner.kill("SIGKILL");
    }
  });

  it("kill -9 of the owner frees the lock at once; a pid reused by another node process does not hold it", async () => {
    const dir = tempDir();
    const owner = await holder(dir, "node");
    children.push(owner);
    owner.kill("SIGKILL");
    await once(owner, "exit");
    // The dead owner's lock file names a pid that now belongs to a live node
    // process (this one): liveness is not read from it.
    writeFileSync(join(dir, LOCK_FILE), `${process.pid}\n`);
    const lock = await acquireInstanceLock({ dir });
    assert.equal(lock.held, true);
    assert.equal(readFileSync(join(dir, LOCK_FILE), "utf8"), `${process.pid}\n`);
    if (lock.held) {
      lock.release();
    }
  });

  it("four takers racing, on a free folder and on a kill -9'd owner's socket: exactly one holds it", async () => {
    for (const folder of ["free", "dead owner"]) {
      const dir = tempDir();
      if (folder === "dead owner") {
        const owner = await holder(dir, "node");
        owner.kill("SIGKILL");
        await once(owner, "exit");
        assert.ok(existsSync(join(dir, LOCK_SOCKET_FILE)), "its socket file is left");
      }
      // Each keeps what it took until killed: racers start seconds apart on a loaded machine.
      const script = `const { acquireInstanceLock } = await import(${JSON.stringify(MODULE)});
const lock = await acquireInstanceLock({ dir: ${JSON.stringify(dir)} });
console.log(lock.held ? "held" : "not held");
setInterval(() => {}, 1000);`;
      const racers = Array.from({ length: 4 }, () =>
        spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
          stdio: ["ignore", "pipe", "inherit"],
        }),
      );
      children.push(...racers);
      const said = await Promise.all(
        racers.map(async (racer) => {
          const [line] = (await once(racer.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
          return line.toString().trim();
        }),
      );
      assert.deepEqual(
        said.sort(),
        ["held", "not held", "not held", "not held"],
        `${folder}: one holder, three told`,
      );
      for (const racer of racers) {
        racer.kill("SIGKILL");
      }
    }
  });
});
