import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Redis } from "ioredis";
import { freePort } from "../../../src/process/ports.js";
import {
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../../src/redis/redis-server-process.js";
import { createReadinessProbe } from "../../../src/server/readiness.js";

// The probe over a real client of a private redis-server, which a test
// freezes (SIGSTOP) as a stalled host would.
describe("createReadinessProbe", () => {
  let dir: string;
  let server: RedisServerProcess;
  let client: Redis;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "perps-readiness-"));
    server = await startRedisServerProcess({ dir, port: await freePort(), appendOnly: false });
    client = new Redis(`redis://127.0.0.1:${server.port}`);
    await client.ping();
  });
  after(async () => {
    client.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is ready while Redis answers PING", async () => {
    assert.equal(await createReadinessProbe({ redis: { client } })(), "ready");
  });

  it("is not ready once the service starts stopping, Redis answering or not", async () => {
    const stopping = new AbortController();
    const ready = createReadinessProbe({ redis: { client }, stopping: stopping.signal });
    assert.equal(await ready(), "ready");
    stopping.abort();
    assert.equal(await ready(), "not ready");
  });

  it("is not ready while the client is not connected, without sending anything", async () => {
    const idle = new Redis(`redis://127.0.0.1:${server.port}`, { lazyConnect: true });
    try {
      assert.notEqual(idle.status, "ready");
      assert.equal(await createReadinessProbe({ redis: { client: idle } })(), "not ready");
      assert.equal(idle.status, "wait", "the probe did not connect the client");
    } finally {
      idle.disconnect();
    }
  });

  it("a PING Redis does not answer within timeoutMs: not ready, answered while Redis is still frozen", async () => {
    const pid = server.child.pid;
    assert.ok(pid !== undefined);
    const ready = createReadinessProbe({ redis: { client }, timeoutMs: 100 });
    process.kill(pid, "SIGSTOP");
    // Thawed in 2 s whatever happens: a probe that waited for the PONG would
    // answer then, and say ready.
    const thaw = setTimeout(() => process.kill(pid, "SIGCONT"), 2000);
    let answer: string;
    try {
      answer = await ready();
    } finally {
      clearTimeout(thaw);
      process.kill(pid, "SIGCONT");
    }
    assert.equal(answer, "not ready");
    // The PING left in flight is answered: the next probe is ready again.
    assert.equal(await client.ping(), "PONG");
    assert.equal(await ready(), "ready");
  });

  it("says serving from cache, not not ready, while Redis cannot answer and the cache's grace answers checks", async () => {
    let grace = true;
    const idle = new Redis(`redis://127.0.0.1:${server.port}`, { lazyConnect: true });
    const stopping = new AbortController();
    try {
      const ready = createReadinessProbe({
        redis: { client: idle },
        stopping: stopping.signal,
        servingFromCache: () => grace,
      });
      assert.equal(await ready(), "serving from cache");
      grace = false;
      assert.equal(await ready(), "not ready");
      grace = true;
      stopping.abort();
      assert.equal(await ready(), "not ready", "stopping wins");
      // Redis answering: ready, whatever the cache says.
      assert.equal(
        await createReadinessProbe({ redis: { client }, servingFromCache: () => true })(),
        "ready",
      );
    } finally {
      idle.disconnect();
    }
  });
});
