import assert from "node:assert/strict";
import { once } from "node:events";
import { describe, it } from "node:test";
import { Redis } from "ioredis";
import {
  createPrimaryWatch,
  type PrimaryChange,
  primaryChange,
} from "../../../src/redis/primary-watch.js";
import { startTestRedisServer } from "../../support/test-redis.js";

describe("primaryChange", () => {
  it("names the primaries gone and come", () => {
    assert.deepEqual(primaryChange(["10.0.0.1:6379"], ["10.0.0.2:6379"]), {
      from: "10.0.0.1:6379",
      to: "10.0.0.2:6379",
    });
    assert.deepEqual(primaryChange(["a:1", "b:1", "c:1"], ["a:1", "c:1", "d:1"]), {
      from: "b:1",
      to: "d:1",
    });
  });

  it("is nothing on the first sight, or when the same primaries serve", () => {
    assert.equal(primaryChange([], ["a:1"]), undefined);
    assert.equal(primaryChange(["a:1", "b:1"], ["a:1", "b:1"]), undefined);
  });
});

describe("createPrimaryWatch", () => {
  it("tells when a client's next connection reaches another server, not when it comes back to the same", async () => {
    const first = await startTestRedisServer();
    const second = await startTestRedisServer();
    const changes: PrimaryChange[] = [];
    const watch = createPrimaryWatch((change) => changes.push(change));
    // One client followed across a move, as a Sentinel client is across a failover.
    const client = new Redis({ port: first.port, maxRetriesPerRequest: 0, lazyConnect: true });
    const reconnect = async () => {
      const ended = once(client, "end");
      client.disconnect();
      await ended;
      await client.connect();
    };
    try {
      watch.watch(client);
      await client.connect();
      await client.ping();
      await reconnect();
      await client.ping();
      assert.deepEqual(changes, []);
      client.options.port = second.port;
      await reconnect();
      await client.ping();
      assert.deepEqual(changes, [
        { from: `127.0.0.1:${first.port}`, to: `127.0.0.1:${second.port}` },
      ]);
    } finally {
      client.disconnect();
      await first.dispose();
      await second.dispose();
    }
  });
});
