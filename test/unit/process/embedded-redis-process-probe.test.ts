import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import { isAlive } from "../../../src/process/embedded-redis.js";

describe("isAlive", () => {
  it("true for a live process, false once it has exited and been reaped", async () => {
    assert.equal(isAlive(process.pid), true);
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], {
      stdio: "ignore",
    });
    await once(child, "spawn");
    const pid = child.pid;
    assert.ok(pid !== undefined);
    assert.equal(isAlive(pid), true);
    child.kill("SIGKILL");
    await once(child, "exit");
    assert.equal(isAlive(pid), false);
  });
});
