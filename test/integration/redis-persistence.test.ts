import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Redis } from "ioredis";
import { parse } from "yaml";
import { startEmbeddedRedis } from "../../src/process/embedded-redis.js";
import { freePort } from "../../src/process/ports.js";
import { documentedFiles, markdownBlocks, REPO_ROOT } from "../support/markdown-blocks.js";

// A Redis restarted without persistence forgets every token and key (issue
// 34): the default and every recipe keep an append-only file, synced at least
// every second.
const SYNCED = ["everysec", "always"];

describe("Redis persistence stays on", () => {
  it("the embedded default keeps an append-only file and its data across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "perps-aof-"));
    try {
      const connect = (location: { url: string } | { path: string }) =>
        new Redis({
          ...("path" in location
            ? { path: location.path }
            : { port: Number(new URL(location.url).port) }),
          maxRetriesPerRequest: 0,
        });
      const first = await startEmbeddedRedis(dir, freePort, () => true);
      const client = connect(first.server.location);
      try {
        assert.deepEqual(await client.config("GET", "appendonly"), ["appendonly", "yes"]);
        const [, fsync] = (await client.config("GET", "appendfsync")) as string[];
        assert.ok(SYNCED.includes(fsync ?? ""), `appendfsync ${fsync}`);
        await client.set("kept", "1");
      } finally {
        client.disconnect();
      }
      await first.server.stop();
      const second = await startEmbeddedRedis(dir, freePort, () => true);
      const again = connect(second.server.location);
      try {
        assert.equal(await again.get("kept"), "1");
      } finally {
        again.disconnect();
        await second.server.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("compose.yaml's Redis keeps an append-only file synced every second", () => {
    const compose = parse(readFileSync(join(REPO_ROOT, "compose.yaml"), "utf8")) as {
      services: { redis: { command: string[] } };
    };
    const args = compose.services.redis.command;
    const value = (name: string) => args[args.indexOf(name) + 1];
    assert.equal(value("--appendonly"), "yes");
    assert.ok(SYNCED.includes(value("--appendfsync") ?? ""), String(value("--appendfsync")));
  });

  it("no documented recipe starts a redis-server without one", () => {
    for (const file of documentedFiles()) {
      for (const block of markdownBlocks(file)) {
        for (const line of block.text.split("\n")) {
          assert.ok(
            !/^\s*appendonly\s+no\b|--appendonly\s+"?no\b/.test(line),
            `${file}:${block.line}: ${line}`,
          );
          if (/\bredis-server\s+--/.test(line)) {
            assert.match(line, /--appendonly\s+"?yes/, `${file}:${block.line}: ${line}`);
          }
        }
      }
    }
  });
});
