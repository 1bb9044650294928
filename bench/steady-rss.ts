// `npm run bench:steady-rss`: a worker's memory under a long steady load
// (issue 40). One worker (WORKERS=1) at the service's defaults, the log
// line at info written to a file (bench/service-process.ts), IntrospectToken
// over gRPC at 8 connections × 16 streams, in back-to-back loads; the
// worker's RSS after each. Verdict: flat after the warm-up within 15 %
// (bench/rss-flatness.ts). Exits 1 when it is not.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTokenStore } from "../src/store/token-store.js";
import { STORE_SETTINGS } from "../test/support/store-settings.js";
import { newBenchUsers, registerUsers } from "./bench-users.js";
import { introspectFrames, introspectLoad } from "./check-loads.js";
import { startBenchRedis } from "./redis-server.js";
import { rssFlatness } from "./rss-flatness.js";
import { seedTokens } from "./seed-tokens.js";
import { startServiceProcess } from "./service-process.js";

const quick = process.argv.includes("--quick");
const LOADS = quick ? 5 : 12;
const LOAD_SECONDS = quick ? 5 : 20;
const WARMUP = 2;
const TOLERANCE = 0.15;
const CONNECTIONS = 8;
const CONCURRENCY = 128;

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const redis = await startBenchRedis();
const users = newBenchUsers(10);
const store = createTokenStore({
  ...STORE_SETTINGS,
  redis: { client: redis.client },
  rateLimitPerMinute: 1e6,
  maxActivePerUser: 1e6,
});
const service = await startServiceProcess({ redisUrl: redis.url, env: { WORKERS: "1" } });
const startMb = mb(service.rssBytes());
const loads: { rps: number; calls: number; rssMb: number }[] = [];
try {
  await registerUsers(`http://127.0.0.1:${service.internalPort}`, users);
  const seeded = await seedTokens({ store, users, count: 100, named: true, lifetimeMs: 3_600_000 });
  const frames = introspectFrames(seeded.map((t) => t.token));
  for (let i = 1; i <= LOADS; i++) {
    const result = await introspectLoad(
      `127.0.0.1:${service.internalPort}`,
      frames,
      { concurrency: CONCURRENCY, connections: CONNECTIONS },
      LOAD_SECONDS,
    )();
    if (result.errors > 0) {
      throw new Error(`load ${i}: ${result.errors} errors`);
    }
    const load = {
      rps: Math.round(result.throughput),
      calls: Math.round(result.throughput * result.seconds),
      rssMb: mb(service.rssBytes()),
    };
    loads.push(load);
    process.stderr.write(`load ${i}: ${load.calls} calls, ${load.rps}/s, RSS ${load.rssMb} MB\n`);
  }
} finally {
  await service.stop();
  await redis.stop();
}

const verdict = rssFlatness(
  loads.map((l) => l.rssMb),
  { warmup: WARMUP, tolerance: TOLERANCE },
);
const lines = [
  "## A worker's RSS under a long steady load",
  "",
  `${new Date().toISOString()}, node ${process.version}, WORKERS=1, LOG_LEVEL=info (the line to a file), IntrospectToken over gRPC, ${CONNECTIONS} connections × ${CONCURRENCY / CONNECTIONS} streams, ${LOADS} loads of ${LOAD_SECONDS} s back to back; RSS at start ${startMb} MB.`,
  "",
  "| Load | Calls | req/s | RSS after (MB) |",
  "|---:|---:|---:|---:|",
  ...loads.map(
    (l, i) =>
      `| ${i + 1}${i < WARMUP ? " (warm-up)" : ""} | ${l.calls.toLocaleString("en")} | ${l.rps.toLocaleString("en")} | ${l.rssMb} |`,
  ),
  "",
  `Verdict: **${verdict.flat ? "flat" : "not flat"}** after ${WARMUP} loads of warm-up: ${verdict.lowMb} → ${verdict.highMb} MB, ${verdict.ratio} × (flat: at most ${1 + TOLERANCE} ×).`,
];
const text = `${lines.join("\n")}\n`;
process.stdout.write(text);
if (!quick) {
  writeFileSync(join(import.meta.dirname, "results", "steady-rss.md"), text);
}
process.exitCode = verdict.flat ? 0 : 1;
