// `npm run bench:layers`: where the event loop's CPU time per REST create
// goes, layer by layer, measured with Linux `perf` (package linux-perf) on
// the service's main thread. V8's own sampler (`bench/profile.ts`) is biased
// on a busy VM: it charges a thread's waits for the CPU to whatever frame was
// running, e.g. six times perf's figure for the verify hand-off. perf samples
// CPU time only.
//
// The service runs as `npm start` does, with --perf-basic-prof-only-functions
// so perf can name JavaScript frames. With two or more CPUs, its main thread
// gets CPU 0 to itself; its other threads, Redis and the load generator share
// the rest, so nothing else's time lands in the samples. Writes
// bench/results/latest-event-loop-layers.md.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { newBenchUsers, registerUsers } from "./bench-users.js";
import { eventLoopLayers, parsePerfScript } from "./event-loop-layers.js";
import { runHttpLoad } from "./http-load.js";
import { startBenchRedis } from "./redis-server.js";
import { startServiceProcess } from "./service-process.js";
import { createSigner } from "./signed-requests.js";
import { measureVerifyCeiling } from "./verify-ceiling.js";

const SECONDS = Number(process.env.BENCH_LAYERS_SECONDS ?? "10");
const CONCURRENCY = 32;
const log = (text: string) => process.stdout.write(`${text}\n`);

function perfWorks(): boolean {
  try {
    execFileSync("perf", ["record", "-q", "-e", "cpu-clock", "-o", "/dev/null", "--", "true"], {
      stdio: "ignore",
    });
    return true;
  } catch {
    return false;
  }
}
if (!perfWorks()) {
  log("bench:layers needs Linux perf allowed to record (apt-get install linux-perf; run as root)");
  process.exit(1);
}

// In the same run, as the figures move with the host.
const ceiling = measureVerifyCeiling(2);
const work = mkdtempSync(join(tmpdir(), "perps-bench-layers-"));
const redis = await startBenchRedis();
const service = await startServiceProcess({
  redisUrl: redis.url,
  // One process, so that one profile holds every request.
  env: { WORKERS: "1" },
  nodeFlags: ["--perf-basic-prof-only-functions"],
});
const users = newBenchUsers(500);
await registerUsers(`http://127.0.0.1:${service.internalPort}`, users);
const signer = createSigner(users);
const load = (seconds: number) => {
  const bodies = signer.creates(12_000 * seconds).map((r) => r.json);
  return runHttpLoad({
    url: `http://127.0.0.1:${service.publicPort}`,
    method: "POST",
    path: "/user/tokens",
    bodies,
    connections: CONCURRENCY,
    seconds,
  });
};
// Warm-up: JIT, connections, and the thread pool's threads, which must exist to be pinned.
await load(3);

const pinned = cpus().length >= 2;
if (pinned) {
  const rest = `1-${cpus().length - 1}`;
  execFileSync("taskset", ["-cp", "0", String(service.pid)], { stdio: "ignore" });
  for (const tid of readdirSync(`/proc/${service.pid}/task`)) {
    if (Number(tid) !== service.pid) {
      execFileSync("taskset", ["-cp", rest, tid], { stdio: "ignore" });
    }
  }
  for (const pid of [process.pid, redis.pid]) {
    execFileSync("taskset", ["-acp", rest, String(pid)], { stdio: "ignore" });
  }
}

const perfData = join(work, "perf.data");
const mainBefore = service.mainThreadCpuSeconds();
const loaded = load(SECONDS);
// Record the middle of the load: not its ramp-up, not its end.
await sleep(1000);
// 2 kHz sampling of the main thread's CPU time, call stacks included.
const perfArgs = ["record", "-q", "-e", "cpu-clock", "-F", "2000", "-g", "-t", String(service.pid)];
const recordFor = String(Math.max(1, SECONDS - 2));
const perf = spawn("perf", [...perfArgs, "-o", perfData, "--", "sleep", recordFor], {
  stdio: "ignore",
});
const recorded = new Promise((resolve) => perf.once("exit", resolve));
const result = await loaded;
await recorded;
const eventLoopUs = Math.round(
  ((service.mainThreadCpuSeconds() - mainBefore) * 1e6) / Math.max(1, result.ok),
);
const stacks = parsePerfScript(
  execFileSync("perf", ["script", "-i", perfData, "-F", "ip,sym"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "ignore"],
  }),
);
await service.stop();
await redis.stop();
rmSync(work, { recursive: true, force: true });
rmSync(`/tmp/perf-${service.pid}.map`, { force: true });

const layers = eventLoopLayers(stacks, eventLoopUs);
const markdown = [
  `Run ${new Date().toISOString()}: REST create at concurrency ${CONCURRENCY}, ${result.throughput.toLocaleString("en")}/s, errors ${result.errors}; ${eventLoopUs} µs of event-loop CPU per create (perf's sampling included), against ${ceiling.microseconds} µs for one verify on one thread; ${stacks.length.toLocaleString("en")} samples of the main thread${pinned ? ", alone on CPU 0" : ""}. A sample counts for the innermost layer on its stack (bench/event-loop-layers.ts).`,
  "",
  "| Layer (event loop, per REST create) | µs | share |",
  "|---|---:|---:|",
  ...layers.map(
    (l) => `| ${l.name} | ${Math.round(l.microseconds)} | ${Math.round(l.share * 100)}% |`,
  ),
  "",
].join("\n");
writeFileSync(join(import.meta.dirname, "results", "latest-event-loop-layers.md"), markdown);
log(markdown);
