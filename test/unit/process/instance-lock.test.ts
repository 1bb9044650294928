import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { acquireInstanceLock, LOCK_FILE } from "../../../src/process/instance-lock.js";

describe("acquireInstanceLock", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "perps-lock-"));
    dirs.push(dir);
    return join(dir, "redis");
  };
  after(() => {
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("takes a free folder's lock with its pid, and releases it", () => {
    const dir = tempDir();
    const lock = acquireInstanceLock({ dir });
    assert.equal(lock.held, true);
    assert.equal(readFileSync(join(dir, LOCK_FILE), "utf8"), `${process.pid}\n`);
    assert.deepEqual(readdirSync(dir), [LOCK_FILE], "no temp file left");
    if (lock.held) {
      lock.release();
    }
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
  });

  it("a lock held by a live service process (node) is in use: left as it is", () => {
    const dir = tempDir();
    const mine = acquireInstanceLock({ dir });
    const other = acquireInstanceLock({ dir, pid: 2 ** 22 + 1 });
    assert.deepEqual(
      { held: other.held, owner: other.held ? 0 : other.ownerPid },
      {
        held: false,
        owner: process.pid,
      },
    );
    assert.equal(readFileSync(join(dir, LOCK_FILE), "utf8"), `${process.pid}\n`);
    if (mine.held) {
      mine.release();
    }
  });

  it("a lock whose pid is dead, or reused by another program, is stale and taken over", () => {
    const dead = spawnSync("true").pid ?? 0;
    const sleeper = spawn("sleep", ["5"]);
    try {
      for (const pid of [dead, sleeper.pid ?? 0]) {
        const dir = tempDir();
        const lock = acquireInstanceLock({ dir, pid: 1 });
        assert.equal(lock.held, true);
        writeFileSync(join(dir, LOCK_FILE), `${pid}\n`);
        const taken = acquireInstanceLock({ dir });
        assert.equal(taken.held, true, `pid ${pid}`);
        assert.equal(readFileSync(join(dir, LOCK_FILE), "utf8"), `${process.pid}\n`);
        // The earlier holder's release leaves the new holder's lock alone.
        if (lock.held) {
          lock.release();
        }
        assert.equal(existsSync(join(dir, LOCK_FILE)), true);
        assert.deepEqual(readdirSync(dir), [LOCK_FILE]);
      }
    } finally {
      sleeper.kill();
    }
  });
});
