import assert from "node:assert/strict";
import { once } from "node:events";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import type { RedisClient } from "../../../src/redis/redis-client.js";
import { createRebuildingRedisHolder } from "../../../src/redis/redis-holder.js";
import { redisServerSuite } from "../../support/redis-server-suite.js";

// The holder over real clients of a private redis-server.
describe("createRebuildingRedisHolder", () => {
  const { server } = redisServerSuite();

  /** A holder of clients of the server, and what it told of them. */
  function holder(minRebuildIntervalMs: number) {
    const built: RedisClient[] = [];
    const rebuilds: number[] = [];
    let rebuilt: () => void = () => undefined;
    const h = createRebuildingRedisHolder({
      create: () => new Redis(server.url),
      onClient: (client) => built.push(client),
      onRebuild: (n) => {
        rebuilds.push(n);
        rebuilt();
      },
      minRebuildIntervalMs,
    });
    const nextRebuild = () =>
      new Promise<void>((resolve) => {
        rebuilt = resolve;
      });
    return { h, built, rebuilds, nextRebuild };
  }

  it("holds the client it built, and tells onClient of it", async () => {
    const { h, built, rebuilds } = holder(0);
    try {
      assert.deepEqual(built, [h.client]);
      assert.equal(await h.client.ping(), "PONG");
      assert.deepEqual(rebuilds, []);
    } finally {
      h.close();
    }
  });

  it("replaces a client that ended for good, each time, with a working one", async () => {
    const { h, built, rebuilds, nextRebuild } = holder(0);
    try {
      const first = h.client;
      let rebuilt = nextRebuild();
      first.disconnect();
      await rebuilt;
      assert.notEqual(h.client, first);
      assert.equal(first.status, "end");
      assert.equal(await h.client.ping(), "PONG");

      rebuilt = nextRebuild();
      h.client.disconnect();
      await rebuilt;
      assert.deepEqual(rebuilds, [1, 2]);
      assert.equal(built.length, 3);
      assert.equal(built[2], h.client);
      assert.equal(await h.client.ping(), "PONG");
    } finally {
      h.close();
    }
  });

  it("waits minRebuildIntervalMs after a build before the next, and builds none once closed", async () => {
    const { h, built, rebuilds } = holder(60_000);
    const first = h.client;
    await first.ping();
    const ended = once(first, "end");
    first.disconnect();
    await ended;
    await sleep(200);
    // Ended long before the interval since it was built: not replaced yet.
    assert.equal(h.client, first);
    assert.deepEqual(rebuilds, []);
    h.close();
    assert.equal(h.client, first);
    assert.equal(built.length, 1);
  });

  it("close() ends the client in use and builds no other", async () => {
    const { h, built, rebuilds } = holder(0);
    await h.client.ping();
    const ended = once(h.client, "end");
    h.close();
    await ended;
    assert.equal(h.client.status, "end");
    await sleep(200);
    assert.equal(built.length, 1);
    assert.deepEqual(rebuilds, []);
  });
});
