import assert from "node:assert/strict";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { freePort } from "../../../src/process/ports.js";
import {
  RedisBinaryMissingError,
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../../src/redis/redis-server-process.js";
import { tempDirs } from "../../support/temp-dirs.js";

const dirs = tempDirs("redis-server-process-");

/** A client of the server, used for one call and closed. */
async function withClient<T>(server: RedisServerProcess, use: (redis: Redis) => Promise<T>) {
  const { location } = server;
  const redis = "url" in location ? new Redis(location.url) : new Redis({ path: location.path });
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** Whether anything accepts a connection on the port now. */
async function accepts(port: number): Promise<boolean> {
  const redis = new Redis({
    port,
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** Whether the port stops accepting connections within `ms`. */
async function closesWithin(port: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!(await accepts(port))) {
      return true;
    }
    await sleep(50);
  }
  return false;
}

describe("startRedisServerProcess", () => {
  after(() => dirs.removeAll());

  it("runs a private server on a port of 127.0.0.1 until stopped", async () => {
    const port = await freePort();
    const server = await startRedisServerProcess({ dir: dirs.make(), port });
    assert.deepEqual(server.location, { url: `redis://127.0.0.1:${port}` });
    assert.equal(server.port, port);
    assert.equal(await withClient(server, (r) => r.ping()), "PONG");
    // Nothing is ever evicted, and nothing is saved but what appendOnly asks for.
    assert.deepEqual(await withClient(server, (r) => r.config("GET", "maxmemory-policy")), [
      "maxmemory-policy",
      "noeviction",
    ]);
    assert.deepEqual(await withClient(server, (r) => r.config("GET", "appendonly")), [
      "appendonly",
      "no",
    ]);
    await server.stop();
    assert.notEqual(server.child.exitCode ?? server.child.signalCode, null);
    assert.equal(await accepts(port), false);
    // Stopping again is nothing.
    await server.stop();
  });

  it("listens on a socket of its folder, and no port, for port unix; creates the folder", async () => {
    const dir = join(dirs.make(), "new", "data");
    const server = await startRedisServerProcess({ dir, port: "unix" });
    try {
      assert.deepEqual(server.location, { path: join(dir, "redis.sock") });
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.equal(await withClient(server, (r) => r.ping()), "PONG");
      assert.deepEqual(await withClient(server, (r) => r.config("GET", "port")), ["port", "0"]);
    } finally {
      await server.stop();
    }
    // redis-server removes its socket when it stops.
    assert.equal(existsSync(join(dir, "redis.sock")), false);
  });

  it("keeps the data across a restart in the same folder with appendOnly", async () => {
    const dir = dirs.make();
    const first = await startRedisServerProcess({ dir, port: "unix", appendOnly: true });
    await withClient(first, (r) => r.set("k", "kept"));
    await first.stop();
    const second = await startRedisServerProcess({ dir, port: "unix", appendOnly: true });
    try {
      assert.equal(await withClient(second, (r) => r.get("k")), "kept");
    } finally {
      await second.stop();
    }
  });

  it("passes extra arguments to the server", async () => {
    const server = await startRedisServerProcess({
      dir: dirs.make(),
      port: "unix",
      extraArgs: ["--maxclients", "77"],
    });
    try {
      assert.deepEqual(await withClient(server, (r) => r.config("GET", "maxclients")), [
        "maxclients",
        "77",
      ]);
    } finally {
      await server.stop();
    }
  });

  it("with exitWithParent, runs the server under a shell of its own group, stopped with it", async () => {
    const port = await freePort();
    const server = await startRedisServerProcess({ dir: dirs.make(), port, exitWithParent: true });
    assert.equal(server.child.spawnfile, "/bin/sh");
    assert.equal(await withClient(server, (r) => r.ping()), "PONG");
    await server.stop();
    assert.equal(await accepts(port), false);
  });

  it("refuses with RedisBinaryMissingError when there is no such binary", async () => {
    for (const exitWithParent of [false, true]) {
      await assert.rejects(
        startRedisServerProcess({
          dir: dirs.make(),
          port: "unix",
          binary: "no-such-redis-server",
          exitWithParent,
        }),
        RedisBinaryMissingError,
      );
    }
  });

  it("refuses with the server's output when it exits at start", async () => {
    await assert.rejects(
      startRedisServerProcess({
        dir: dirs.make(),
        port: "unix",
        extraArgs: ["--no-such-option", "1"],
      }),
      /^Error: redis-server exited with code 1: .*no-such-option/s,
    );
  });

  it("gives up after startTimeoutMs, stopping the server", async () => {
    const port = await freePort();
    await assert.rejects(
      startRedisServerProcess({
        dir: dirs.make(),
        port,
        readyPattern: /a line redis-server never writes/,
        startTimeoutMs: 500,
      }),
      /redis-server did not start within 500 ms/,
    );
    // The stop it began goes on after the refusal: wait for it, however slow the machine.
    assert.ok(await closesWithin(port, 10_000), "the server stopped");
  });
});
