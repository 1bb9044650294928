// `npm run bench:memory [-- --variant=<node flags or NAME=value, comma-separated> ...]`:
// where each of the service's processes (the primary and every worker, at
// their defaults) holds its memory, idle and under load: /proc's RSS split
// into the process's own pages and the shared files, PSS, and what node says
// of itself (process.memoryUsage, V8's heap spaces), plus a heap snapshot of
// an idle and of a loaded worker. Each variant (node flags for every
// process, e.g. --max-semi-space-size=2, or environment such as
// MALLOC_ARENA_MAX=2) runs the same load, so its memory and its CPU per
// request compare with the default's; `--rounds=N` runs the variants N
// times, alternating, and adds their median CPU per request. Writes
// bench/results/memory.{md,json}.
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTokenStore } from "../src/store/token-store.js";
import { STORE_SETTINGS } from "../test/support/store-settings.js";
import { budget } from "./bench-context.js";
import { newBenchUsers, registerUsers } from "./bench-users.js";
import {
  bearerHttpLoad,
  INTROSPECT_PATH,
  introspectFrames,
  introspectLoad,
} from "./check-loads.js";
import { restCreated } from "./create-answers.js";
import { type HeapSnapshotSummary, summarizeHeapSnapshot } from "./heap-snapshot-summary.js";
import type { LoadResult } from "./load-result.js";
import {
  memoryProbeFlag,
  type NodeMemory,
  type ProcessMemory,
  processMemory,
} from "./process-memory.js";
import { runRawGrpcLoad } from "./raw-grpc-load.js";
import { runRawHttpLoad } from "./raw-http-load.js";
import { startBenchRedis } from "./redis-server.js";
import { runMain } from "./run-main.js";
import { seedTokens } from "./seed-tokens.js";
import { processTree, type ServiceProcess, startServiceProcess } from "./service-process.js";
import { createSigner } from "./signed-requests.js";

const log = (text: string) => process.stdout.write(`${text}\n`);
const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const LOAD_SECONDS = 5;
const CONCURRENCY = 64;
/** Issue 35: a worker's memory with this many token records in its cache. */
const CACHED_TOKENS = 100_000;
const CACHED_WHEN = `${CACHED_TOKENS.toLocaleString("en-US")} tokens cached`;
const LIVE_BEFORE = "before caching, after a full GC";
const LIVE_CACHED = `${CACHED_WHEN}, after a full GC`;

interface Sample {
  process: string;
  when:
    | "idle"
    | "loaded"
    | "after load"
    | typeof CACHED_WHEN
    | typeof LIVE_BEFORE
    | typeof LIVE_CACHED;
  proc: ProcessMemory;
  node: NodeMemory | undefined;
}

interface LoadRow {
  load: string;
  throughput: number;
  errors: number;
  cpuUsPerRequest: number;
}

interface VariantResult {
  label: string;
  flags: string[];
  samples: Sample[];
  loads: LoadRow[];
  snapshots: { when: string; summary: HeapSnapshotSummary }[];
}

/** Asks a process for its NodeMemory (the probe answers SIGWINCH with a file). */
async function nodeMemoryOf(pid: number, dir: string): Promise<NodeMemory | undefined> {
  const file = join(dir, `${pid}.json`);
  rmSync(file, { force: true });
  process.kill(pid, "SIGWINCH");
  for (let i = 0; i < 60; i++) {
    await sleep(50);
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, "utf8")) as NodeMemory;
      } catch {
        // Still being written.
      }
    }
  }
  return undefined;
}

async function sample(
  service: ServiceProcess,
  when: Sample["when"],
  probeDir: string,
): Promise<Sample[]> {
  const pids = processTree(service.pid);
  return Promise.all(
    pids.map(async (pid, i) => ({
      process: pid === service.pid ? "primary" : `worker ${i}`,
      when,
      proc: processMemory(pid),
      node: await nodeMemoryOf(pid, probeDir),
    })),
  );
}

/** A sample of what is live: each process collects its garbage first (see memoryProbeFlag). */
async function liveSample(
  service: ServiceProcess,
  when: Sample["when"],
  probeDir: string,
): Promise<Sample[]> {
  writeFileSync(join(probeDir, "gc"), "");
  try {
    return await sample(service, when, probeDir);
  } finally {
    rmSync(join(probeDir, "gc"));
  }
}

/** Writes a heap snapshot of `pid` (--heapsnapshot-signal) and summarizes it. */
async function snapshotOf(pid: number, dir: string): Promise<HeapSnapshotSummary | undefined> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, "SIGUSR2");
  for (let i = 0; i < 600; i++) {
    await sleep(100);
    const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith(".heapsnapshot"));
    if (file === undefined) {
      continue;
    }
    // Written when its size stops changing.
    const size = statSync(join(dir, file)).size;
    await sleep(500);
    if (statSync(join(dir, file)).size === size && size > 0) {
      const summary = summarizeHeapSnapshot(join(dir, file));
      rmSync(join(dir, file));
      return summary;
    }
  }
  return undefined;
}

async function measured(service: ServiceProcess, label: string, run: () => Promise<LoadResult>) {
  const cpu = service.cpuSeconds();
  const result = await run();
  const row: LoadRow = {
    load: label,
    throughput: result.throughput,
    errors: result.errors,
    cpuUsPerRequest: Math.round(((service.cpuSeconds() - cpu) * 1e6) / Math.max(1, result.ok)),
  };
  log(`  ${label}: ${row.throughput}/s, ${row.cpuUsPerRequest} µs/req, errors ${row.errors}`);
  return row;
}

/** A variant's node flags and its environment (NAME=value entries). */
function splitVariant(entries: readonly string[]) {
  const env: Record<string, string> = {};
  const flags: string[] = [];
  for (const entry of entries) {
    const at = entry.indexOf("=");
    if (!entry.startsWith("-") && at > 0) {
      env[entry.slice(0, at)] = entry.slice(at + 1);
    } else {
      flags.push(entry);
    }
  }
  return { env, flags };
}

async function runVariant(
  label: string,
  entries: string[],
  snapshots: boolean,
): Promise<VariantResult> {
  const { env, flags } = splitVariant(entries);
  log(`variant ${label}`);
  const redis = await startBenchRedis();
  const probeDir = mkdtempSync(join(tmpdir(), "perps-memory-probe-"));
  const snapshotDir = mkdtempSync(join(tmpdir(), "perps-memory-snapshots-"));
  let service: ServiceProcess | undefined;
  try {
    service = await startServiceProcess({
      redisUrl: redis.url,
      nodeFlags: [
        memoryProbeFlag(),
        "--expose-gc",
        "--heapsnapshot-signal=SIGUSR2",
        `--diagnostic-dir=${snapshotDir}`,
        ...flags,
      ],
      env: { ...env, MEMORY_PROBE_DIR: probeDir },
    });
    const running = service;
    await sleep(3000);
    const samples = await sample(running, "idle", probeDir);
    const worker = processTree(running.pid)[1] ?? running.pid;
    const taken: VariantResult["snapshots"] = [];
    if (snapshots) {
      const idle = await snapshotOf(worker, snapshotDir);
      if (idle !== undefined) {
        taken.push({ when: "idle worker", summary: idle });
      }
    }
    const users = newBenchUsers(200);
    await registerUsers(`http://127.0.0.1:${running.internalPort}`, users);
    const store = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis.client },
      rateLimitPerMinute: 1_000_000,
      maxActivePerUser: 1_000_000,
    });
    const tokens = (
      await seedTokens({ store, users, count: 5_000, named: false, lifetimeMs: 3_600_000 })
    ).map((t) => t.token);
    const internal = `127.0.0.1:${running.internalPort}`;
    const loads: LoadRow[] = [];
    loads.push(
      await measured(
        running,
        "forward-auth",
        bearerHttpLoad(`http://${internal}`, tokens, { concurrency: CONCURRENCY }, LOAD_SECONDS),
      ),
    );
    loads.push(
      await measured(
        running,
        "IntrospectToken",
        introspectLoad(
          internal,
          introspectFrames(tokens),
          { concurrency: CONCURRENCY },
          LOAD_SECONDS,
        ),
      ),
    );
    const bodies = createSigner(users)
      .creates(budget(8_000, LOAD_SECONDS, CONCURRENCY))
      .map((r) => r.json);
    // Sampled in the middle of the REST create load: the heap at work.
    const loaded = sleep((LOAD_SECONDS * 1000) / 2).then(() => sample(running, "loaded", probeDir));
    loads.push(
      await measured(running, "REST create", () =>
        runRawHttpLoad({
          url: `http://127.0.0.1:${running.publicPort}`,
          method: "POST",
          path: "/user/tokens",
          bodies,
          connections: CONCURRENCY,
          seconds: LOAD_SECONDS,
          accept: restCreated,
        }),
      ),
    );
    samples.push(...(await loaded), ...(await sample(running, "after load", probeDir)));
    samples.push(...(await liveSample(running, LIVE_BEFORE, probeDir)));
    // Every one of them checked once over one connection: one worker sees them all and keeps each.
    const many = (
      await seedTokens({ store, users, count: CACHED_TOKENS, named: false, lifetimeMs: 3_600_000 })
    ).map((t) => t.token);
    const checked = await runRawGrpcLoad({
      address: internal,
      path: INTROSPECT_PATH,
      frames: introspectFrames(many),
      once: true,
      concurrency: 32,
      connections: 1,
      seconds: 0,
      accept: (length) => length > 0,
    });
    log(`  ${CACHED_WHEN}: ${checked.ok} checks answered, errors ${checked.errors}`);
    samples.push(...(await sample(running, CACHED_WHEN, probeDir)));
    samples.push(...(await liveSample(running, LIVE_CACHED, probeDir)));
    if (snapshots) {
      const after = await snapshotOf(worker, snapshotDir);
      if (after !== undefined) {
        taken.push({ when: "worker after load", summary: after });
      }
    }
    return { label, flags: entries, samples, loads, snapshots: taken };
  } finally {
    await service?.stop();
    await redis.stop();
    rmSync(probeDir, { recursive: true, force: true });
    rmSync(snapshotDir, { recursive: true, force: true });
  }
}

const space = (s: Sample, name: string) =>
  s.node?.heapSpaces.find((h) => h.space_name === name)?.space_size ?? 0;

/** What the token cache costs: the worker whose live heap grew most while it cached the tokens. */
function cacheLine(samples: readonly Sample[]): string {
  const live = (s: Sample | undefined) =>
    (s?.node?.memoryUsage.heapUsed ?? 0) + (s?.node?.memoryUsage.arrayBuffers ?? 0);
  const grown = samples
    .filter((s) => s.when === LIVE_CACHED)
    .map((s) => ({
      process: s.process,
      growth:
        live(s) - live(samples.find((b) => b.when === LIVE_BEFORE && b.process === s.process)),
      cached: samples.find((c) => c.when === CACHED_WHEN && c.process === s.process),
    }))
    .sort((a, b) => b.growth - a.growth)[0];
  if (grown?.cached === undefined) {
    return "No sample with the tokens cached.";
  }
  return `With ${CACHED_WHEN}: ${grown.process}'s live V8 heap and array buffers grew by ${mb(grown.growth)} MB (after a full GC each time), ${Math.round(grown.growth / CACHED_TOKENS)} bytes per token; as it ran, before any forced GC, its RSS was ${mb(grown.cached.proc.rss)} MB and its PSS ${mb(grown.cached.proc.pss)} MB.`;
}

function markdown(results: readonly VariantResult[]): string {
  const lines = [
    "## Memory of the service's processes",
    "",
    `${new Date().toISOString()}, node ${process.version}, the service at its defaults (primary + one worker per core); loads of ${LOAD_SECONDS} s each at concurrency ${CONCURRENCY}: forward-auth, IntrospectToken, REST create (sampled half-way); then ${CACHED_TOKENS.toLocaleString("en-US")} more tokens, each checked once over one connection, so that one worker caches them all ("${CACHED_WHEN}"). MB; RSS = own (anonymous) + shared files; PSS divides shared pages among the processes sharing them.`,
    "",
  ];
  for (const r of results) {
    lines.push(
      `### ${r.label}${r.flags.length > 0 ? ` (\`${r.flags.join(" ")}\`)` : ""}`,
      "",
      "| Process | When | RSS | own | files | PSS | V8 heap total | heap used | new space | old space | code space | external | array buffers |",
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...r.samples.map(
        (s) =>
          `| ${s.process} | ${s.when} | ${mb(s.proc.rss)} | ${mb(s.proc.anon)} | ${mb(s.proc.file)} | ${mb(s.proc.pss)} | ${mb(s.node?.memoryUsage.heapTotal ?? 0)} | ${mb(s.node?.memoryUsage.heapUsed ?? 0)} | ${mb(space(s, "new_space"))} | ${mb(space(s, "old_space"))} | ${mb(space(s, "code_space"))} | ${mb(s.node?.memoryUsage.external ?? 0)} | ${mb(s.node?.memoryUsage.arrayBuffers ?? 0)} |`,
      ),
      "",
      cacheLine(r.samples),
      "",
      "| Load | req/s | service CPU µs / req | errors |",
      "|---|---:|---:|---:|",
      ...r.loads.map((l) => `| ${l.load} | ${l.throughput} | ${l.cpuUsPerRequest} | ${l.errors} |`),
      "",
    );
    for (const { when, summary } of r.snapshots) {
      lines.push(
        `Heap snapshot, ${when}: ${mb(summary.totalBytes)} MB of objects. By type: ${summary.byType
          .slice(0, 10)
          .map(([t, b]) => `${t} ${mb(b)}`)
          .join(", ")}. Largest by name: ${summary.byName
          .slice(0, 12)
          .map(([n, b]) => `${n} ${mb(b)}`)
          .join("; ")}.`,
        "",
      );
    }
  }
  return lines.join("\n");
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
};

/** Each variant's CPU per request and throughput over the alternating rounds: the lever's cost. */
function cpuMarkdown(results: readonly VariantResult[]): string {
  const labels = [...new Set(results.map((r) => r.label))];
  const loads = [...new Set(results.flatMap((r) => r.loads.map((l) => l.load)))];
  const rows = labels.flatMap((label) =>
    loads.map((load) => {
      const runs = results
        .filter((r) => r.label === label)
        .flatMap((r) => r.loads.filter((l) => l.load === load));
      const workerRss = results
        .filter((r) => r.label === label)
        .flatMap((r) => r.samples.filter((s) => s.when === "loaded" && s.process !== "primary"))
        .map((s) => mb(s.proc.rss));
      return `| ${label} | ${load} | ${median(runs.map((l) => l.cpuUsPerRequest))} | ${runs.map((l) => l.cpuUsPerRequest).join(", ")} | ${median(runs.map((l) => l.throughput))} | ${Math.min(...workerRss)}–${Math.max(...workerRss)} |`;
    }),
  );
  return [
    "### CPU per request of each variant, rounds alternating",
    "",
    "| Variant | Load | median µs / req | rounds (µs / req) | median req/s | loaded worker RSS (MB, every round) |",
    "|---|---|---:|---|---:|---|",
    ...rows,
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  const variants = process.argv
    .slice(2)
    .filter((a) => a.startsWith("--variant="))
    .map((a) =>
      a
        .slice("--variant=".length)
        .split(",")
        .filter((f) => f !== ""),
    );
  const runs: [string, string[]][] = [
    ["default", []],
    ...(variants.length > 0 ? variants : [["--max-semi-space-size=2"]]).map(
      (flags): [string, string[]] => [flags.join(" "), flags],
    ),
  ];
  const roundsArg = process.argv.find((a) => a.startsWith("--rounds="));
  const rounds = roundsArg === undefined ? 1 : Number(roundsArg.slice("--rounds=".length));
  const results: VariantResult[] = [];
  // With --rounds: the variants alternate (A B A B …), so that their CPU per request compares.
  for (let round = 0; round < rounds; round++) {
    for (const [i, [label, flags]] of runs.entries()) {
      results.push(await runVariant(label, flags, round === 0 && i === 0));
    }
  }
  const resultsDir = join(import.meta.dirname, "results");
  const text = `${markdown(results.slice(0, runs.length))}${rounds > 1 ? cpuMarkdown(results) : ""}`;
  writeFileSync(join(resultsDir, "memory.md"), text);
  writeFileSync(join(resultsDir, "memory.json"), `${JSON.stringify(results, null, 2)}\n`);
  log(text);
}

await runMain("bench:memory", main);
