import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createLastUseRecorder } from "../../../src/store/last-use-recorder.js";

const MINUTE = 60_000;

/** A recorder whose writes are kept in `writes`, at the clock `clock.ms`. */
function recorder(touch?: (key: string, at: number) => Promise<unknown>) {
  const writes: [string, number][] = [];
  const failures: [unknown, number][] = [];
  const clock = { ms: 100 * MINUTE + 1234 };
  const r = createLastUseRecorder({
    touch:
      touch ??
      (async (key, at) => {
        writes.push([key, at]);
      }),
    flushIntervalMs: 20,
    failed: (err, n) => failures.push([err, n]),
    now: () => clock.ms,
  });
  return { r, writes, failures, clock };
}

describe("last-use recorder", () => {
  it("writes each token at most once a minute, to the minute, on the next flush", async () => {
    const { r, writes, clock } = recorder();
    r.used("a");
    r.used("a");
    r.used("b");
    assert.deepEqual(writes, [], "nothing is written on the check's path");
    await sleep(60);
    assert.deepEqual(writes, [
      ["a", 100 * MINUTE],
      ["b", 100 * MINUTE],
    ]);
    r.used("a");
    await sleep(60);
    assert.equal(writes.length, 2, "once a minute");
    clock.ms += MINUTE;
    r.used("a");
    await sleep(60);
    assert.deepEqual(writes.at(-1), ["a", 101 * MINUTE]);
    await r.close();
  });

  it("close writes what is noted, and a failed flush is told once with its count", async () => {
    const { r, writes } = recorder();
    r.used("c");
    await r.close();
    assert.deepEqual(writes, [["c", 100 * MINUTE]]);
    const down = new Error("Redis down");
    const failing = recorder(() => Promise.reject(down));
    failing.r.used("x");
    failing.r.used("y");
    await failing.r.close();
    assert.deepEqual(failing.failures, [[down, 2]]);
  });

  it("a close waits no longer than a second for a Redis that does not answer", async () => {
    const { r } = recorder(() => new Promise(() => undefined));
    r.used("z");
    // The recorder's own timers never hold a process open: this test's does.
    const alive = setInterval(() => undefined, 100);
    const started = performance.now();
    await r.close();
    const waited = performance.now() - started;
    clearInterval(alive);
    assert.ok(waited >= 900 && waited < 3000, String(waited));
  });
});
