// `npm run bench:tracing`: what tracing costs per call. The service runs
// with tracing off (no OTEL_* variables: the SDK is never imported) and with
// every call sampled (OTEL_TRACES_SAMPLER=always_on, spans sent in batches to
// a local OTLP/HTTP sink that answers 200), alternating, under the same
// IntrospectToken (gRPC) and forward-auth loads; medians of the rounds.
// Service CPU per request is the figure that counts on a shared machine.
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createTokenStore } from "../src/store/token-store.js";
import { STORE_SETTINGS } from "../test/support/store-settings.js";
import { newBenchUsers, registerUsers } from "./bench-users.js";
import { bearerHttpLoad, introspectFrames, introspectLoad } from "./check-loads.js";
import type { LoadResult } from "./load-result.js";
import { startBenchRedis } from "./redis-server.js";
import { seedTokens } from "./seed-tokens.js";
import { startServiceProcess } from "./service-process.js";

const quick = process.argv.includes("--quick");
const SECONDS = quick ? 2 : 5;
const ROUNDS = quick ? 2 : 4;
const CONCURRENCY = 32;

const sink = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "content-type": "application/x-protobuf" }).end());
});
await new Promise<void>((done) => sink.listen(0, "127.0.0.1", done));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const sides = {
  "tracing off": {},
  "tracing on, 100 % sampled": {
    OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
    OTEL_TRACES_SAMPLER: "always_on",
    OTEL_BSP_SCHEDULE_DELAY: "200",
  },
} as const;
type Side = keyof typeof sides;
type Path = "IntrospectToken (gRPC)" | "forward-auth";

const redis = await startBenchRedis();
const users = newBenchUsers(200);
const store = createTokenStore({
  ...STORE_SETTINGS,
  redis: { client: redis.client },
  rateLimitPerMinute: 1e6,
  maxActivePerUser: 1e6,
});
let tokens: string[] | undefined;
const samples = new Map<string, { rps: number; us: number }[]>();

for (let round = 0; round < ROUNDS; round++) {
  for (const side of Object.keys(sides) as Side[]) {
    const service = await startServiceProcess({
      redisUrl: redis.url,
      env: { WORKERS: "1", ...sides[side] },
    });
    try {
      if (tokens === undefined) {
        await registerUsers(`http://127.0.0.1:${service.internalPort}`, users);
        const seeded = await seedTokens({
          store,
          users,
          count: 2000,
          named: true,
          lifetimeMs: 3_600_000,
        });
        tokens = seeded.map((t) => t.token);
      }
      const loads: Record<Path, (seconds: number) => () => Promise<LoadResult>> = {
        "IntrospectToken (gRPC)": (s) =>
          introspectLoad(
            `127.0.0.1:${service.internalPort}`,
            introspectFrames(tokens ?? []),
            { concurrency: CONCURRENCY },
            s,
          ),
        "forward-auth": (s) =>
          bearerHttpLoad(
            `http://127.0.0.1:${service.internalPort}`,
            tokens ?? [],
            { concurrency: CONCURRENCY },
            s,
          ),
      };
      for (const [path, load] of Object.entries(loads) as [Path, (typeof loads)[Path]][]) {
        await load(1)(); // warm-up
        const before = service.cpuSeconds();
        const result = await load(SECONDS)();
        const requests = result.throughput * result.seconds;
        if (result.errors > 0) {
          throw new Error(`${side}, ${path}: ${result.errors} errors`);
        }
        const key = `${path}|${side}`;
        const list = samples.get(key) ?? [];
        list.push({
          rps: result.throughput,
          us: ((service.cpuSeconds() - before) / requests) * 1e6,
        });
        samples.set(key, list);
      }
    } finally {
      await service.stop();
    }
  }
}
await redis.stop();
sink.close();

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const lines = [
  `## Tracing cost`,
  "",
  `${new Date().toISOString()}, node ${process.version}, one worker, concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${SECONDS} s, sides alternating; medians.`,
  "",
  "| Path | Side | req/s | Service CPU µs / req | Δ µs |",
  "|---|---|---:|---:|---:|",
];
for (const path of ["IntrospectToken (gRPC)", "forward-auth"] as Path[]) {
  const off = median((samples.get(`${path}|tracing off`) ?? []).map((s) => s.us));
  for (const side of Object.keys(sides) as Side[]) {
    const list = samples.get(`${path}|${side}`) ?? [];
    const us = median(list.map((s) => s.us));
    lines.push(
      `| ${path} | ${side} | ${Math.round(median(list.map((s) => s.rps))).toLocaleString("en")} | ${us.toFixed(0)} | ${side === "tracing off" ? "" : `+${(us - off).toFixed(0)}`} |`,
    );
  }
}
const text = `${lines.join("\n")}\n`;
process.stdout.write(text);
if (!quick) {
  writeFileSync(join(import.meta.dirname, "results", "tracing-cost.md"), text);
}
