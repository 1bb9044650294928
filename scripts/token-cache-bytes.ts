// Measures what the token cache costs per token: fills a cache with N
// records read from a private redis-server (the real read path: tracked
// reads, kept after a match) and reports the heap and RSS growth per entry.
// Not a benchmark (nothing is timed): `node --expose-gc --import tsx
// scripts/token-cache-bytes.ts [N]`, default N = 100000.

import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "../src/process/ports.js";
import { startRedisServerProcess } from "../src/redis/redis-server-process.js";
import { redisKeysOf } from "../src/store/keys.js";
import { decodeTokenRecord, encodeTokenRecord } from "../src/store/token-record.js";
import { createTokenRecordCache } from "../src/store/token-record-cache.js";

const count = Number(process.argv[2] ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  throw new Error("run with node --expose-gc");
}
const collect = gc;

function settled(): NodeJS.MemoryUsage {
  collect();
  collect();
  return process.memoryUsage();
}

const dir = mkdtempSync(join(tmpdir(), "perps-cache-bytes-"));
const port = await freePort();
const server = await startRedisServerProcess({ dir, port, appendOnly: false });
const redis = new Redis({ port, host: "127.0.0.1" });
const cache = createTokenRecordCache({
  redis: { client: redis },
  maxEntries: count,
  graceMs: 0,
  probeIntervalMs: 0,
});
try {
  // Token keys as the service names them: a user each, a 16-character id, a 10-character name.
  const keys: string[] = [];
  for (let i = 0; i < count; i += 1000) {
    const batch = redis.pipeline();
    for (let j = i; j < Math.min(count, i + 1000); j++) {
      const key = redisKeysOf(randomUUID()).token(randomBytes(12).toString("base64url"));
      keys.push(key);
      batch.set(
        key,
        encodeTokenRecord({
          digest: randomBytes(28),
          name: "bot-000001",
          expiresAtMs: Date.now() + 3_600_000,
          extras: {},
        }),
      );
    }
    await batch.exec();
  }
  // The tracking pair comes up shortly after the cache is made.
  const deadline = Date.now() + 10_000;
  while (!(await keptOne(keys[0] ?? ""))) {
    if (Date.now() > deadline) {
      throw new Error("the tracking pair did not come up within 10 s");
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  cache.forget(keys[0] ?? "");
  const before = settled();
  for (let i = 0; i < keys.length; i += 500) {
    await Promise.all(keys.slice(i, i + 500).map(keptOne));
  }
  const filled = keys.filter((key) => cache.get(key) !== undefined).length;
  const after = settled();
  const per = (field: "heapUsed" | "rss" | "external" | "arrayBuffers") =>
    Math.round((after[field] - before[field]) / filled);
  console.log(
    JSON.stringify({
      entries: filled,
      heapBytesPerToken: per("heapUsed"),
      externalBytesPerToken: per("external"),
      rssBytesPerToken: per("rss"),
      rssMiB: Math.round(after.rss / 1024 / 1024),
    }),
  );
} finally {
  cache.close();
  redis.disconnect();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

async function keptOne(key: string): Promise<boolean> {
  const read = await cache.read(key, () => redis.getBuffer(key));
  const record = read.value === null ? undefined : decodeTokenRecord(read.value);
  if (record?.expiresAtMs === undefined) {
    throw new Error(`no record under ${key}`);
  }
  read.keep({
    digest: record.digest,
    name: record.name,
    expiresAtMs: record.expiresAtMs,
    grants: record.grants,
  });
  return cache.get(key) !== undefined;
}
