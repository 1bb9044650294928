// `npm run bench [-- --quick] [-- --cpu-prof] [-- --pin]`: the create/delete path under
// load against its ceiling, one Ed25519 verify per request, and the token
// checks (IntrospectToken, forward-auth) against their floor. See README
// "Performance" for what is measured and the targets.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTokenStore } from "../src/store/token-store.js";
import { benchPlan } from "./bench-plan.js";
import type { BenchReport, Phase, Series, Target } from "./bench-report.js";
import { newBenchUsers, registerUsers } from "./bench-users.js";
import {
  bearerHttpLoad,
  type CheckLoad,
  introspectFrames,
  introspectLoad,
  PACED_HTTP_CONNECTIONS,
} from "./check-loads.js";
import { checkTargets, peakPhase } from "./check-targets.js";
import { runGrpcLoad } from "./grpc-load.js";
import { runHttpLoad } from "./http-load.js";
import type { LoadResult } from "./load-result.js";
import { runPacedHttpLoad } from "./paced-http-load.js";
import { measureTokenMemory } from "./redis-memory.js";
import { startBenchRedis } from "./redis-server.js";
import { commandCalls, redisCpuSeconds, roundTripsPerRequest } from "./redis-stats.js";
import { reportMarkdown } from "./report-markdown.js";
import { reportSvg } from "./report-svg.js";
import { rssTrend } from "./rss-trend.js";
import { seedTokens } from "./seed-tokens.js";
import { type ServiceProcess, startServiceProcess } from "./service-process.js";
import { createSigner } from "./signed-requests.js";
import { measureVerifyCeiling } from "./verify-ceiling.js";

const quick = process.argv.includes("--quick");
const profile = process.argv.includes("--cpu-prof");
const plan = benchPlan(quick);
const resultsDir = join(import.meta.dirname, "results");
const log = (text: string) => process.stdout.write(`${text}\n`);
const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const CREATE_PATH = "/perps.token.v1.TokenService/CreateToken";

log(`bench: ${quick ? "quick" : "full"} run, concurrencies ${plan.concurrencies.join(", ")}`);
// The ceiling first, on a quiet machine, in this same run.
const ceiling = measureVerifyCeiling(plan.verifySeconds);
log(`verify ceiling: ${ceiling.perSecond}/s (${ceiling.microseconds} µs)`);

// `--pin`: the service gets CPU 0 to itself; this process (the load
// generator) and the redis-server it starts (which inherits the affinity)
// share CPU 1. It shows whether the service or the load generator is the
// limit; unpinned, they compete for the same cores.
const pinned = process.argv.includes("--pin") && cpus().length >= 2 && tasksetWorks();
if (pinned) {
  execFileSync("taskset", ["-cp", "1", String(process.pid)], { stdio: "ignore" });
}
log(pinned ? "pinned: service on CPU 0, load generator and Redis on CPU 1" : "not pinned");
const redis = await startBenchRedis();
const service = await startServiceProcess({
  redisUrl: redis.url,
  nodeFlags: profile ? ["--cpu-prof", `--cpu-prof-dir=${join(resultsDir, "profiles")}`] : [],
  ...(pinned ? { cpus: "0" } : {}),
});
// Interrupted: stop the children too, so no service or redis-server is left behind.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    Promise.allSettled([service.stop(), redis.stop()]).then(() => process.exit(130));
  });
}
const publicUrl = `http://127.0.0.1:${service.httpPort}`;
const users = newBenchUsers(plan.users);
await registerUsers(`http://127.0.0.1:${service.grpcPort}`, users);
const signer = createSigner(users);
// The benchmark's own store writes the tokens the delete phases delete.
const store = createTokenStore({
  redis: redis.client,
  rateLimitPerMinute: 1_000_000,
  maxActivePerUser: 1_000_000,
});

/**
 * A rate no phase will beat: twice the best so far (the ceiling before the
 * first), so pre-signing stays proportionate to what the service manages.
 */
const expectedRate = () => {
  const best = Math.max(0, ...phases.map((p) => p.throughput));
  return best === 0 ? ceiling.perSecond : Math.min(ceiling.perSecond, 2 * best + 500);
};

/** Bodies enough for `seconds` at `perSecond`, with headroom; each is sent at most once. */
const budget = (perSecond: number, seconds: number, concurrency: number) =>
  Math.ceil(perSecond * seconds * 1.3) + 4 * concurrency + 100;

/**
 * Runs one load against `server` (default: the service), with RSS, CPU and
 * Redis command counts around it; `clientIssued`: see roundTripsPerRequest.
 */
async function measure(
  series: Series,
  concurrency: number,
  run: () => Promise<LoadResult>,
  server: ServiceProcess = service,
  clientIssued?: ReadonlySet<string>,
): Promise<Phase> {
  const rssBefore = server.rssBytes();
  const cpuBefore = server.cpuSeconds();
  const mainBefore = server.mainThreadCpuSeconds();
  const ownBefore = process.cpuUsage();
  const redisBefore = await redisCpuSeconds(redis.client);
  const before = await commandCalls(redis.client);
  const result = await run();
  // Requests cut off by the end of the load still reach Redis; let them finish.
  await sleep(300);
  const after = await commandCalls(redis.client);
  const cpuAfter = server.cpuSeconds();
  const mainAfter = server.mainThreadCpuSeconds();
  const own = process.cpuUsage(ownBefore);
  const redisAfter = await redisCpuSeconds(redis.client);
  const answered = Math.max(1, result.ok + result.errors);
  const trips = roundTripsPerRequest(
    before,
    after,
    // Answered requests, plus those in flight when the load stopped (at most one per connection).
    result.ok +
      result.errors +
      Math.min(concurrency, Math.max(0, result.sent - result.ok - result.errors)),
    clientIssued,
  );
  const phase: Phase = {
    series,
    concurrency,
    ...result,
    rssBeforeMb: mb(rssBefore),
    rssAfterMb: mb(server.rssBytes()),
    redisRoundTrips: trips.perRequest,
    redisCommands: trips.commands,
    serviceCpuUsPerRequest: Math.round(((cpuAfter - cpuBefore) * 1e6) / answered),
    eventLoopCpuUsPerRequest: Math.round(((mainAfter - mainBefore) * 1e6) / answered),
    loadGeneratorCpuUsPerRequest: Math.round((own.user + own.system) / answered),
    redisCpuUsPerRequest: Math.round(((redisAfter - redisBefore) * 1e6) / answered),
  };
  log(
    `${series.padEnd(15)} c=${String(concurrency).padStart(3)}: ${String(phase.throughput).padStart(5)}/s p50 ${phase.p50Ms} p90 ${phase.p90Ms} p99 ${phase.p99Ms} ms, errors ${phase.errors}${phase.errors > 0 ? ` ${JSON.stringify(phase.failures)}` : ""}, RSS ${phase.rssAfterMb} MB, ${phase.redisRoundTrips} round trips, service CPU ${phase.serviceCpuUsPerRequest} µs/req (event loop ${phase.eventLoopCpuUsPerRequest}), load generator ${phase.loadGeneratorCpuUsPerRequest}, Redis ${phase.redisCpuUsPerRequest}`,
  );
  return phase;
}

function restCreate(concurrency: number, seconds: number, perSecond: number) {
  const bodies = signer.creates(budget(perSecond, seconds, concurrency)).map((r) => r.json);
  return () =>
    runHttpLoad({
      url: publicUrl,
      method: "POST",
      path: "/user/tokens",
      bodies,
      connections: concurrency,
      seconds,
    });
}

const phases: Phase[] = [];
// Warm-up: JIT, connection pools and Redis' script cache, not reported.
await restCreate(32, plan.warmupSeconds, ceiling.perSecond)();
await runGrpcLoad({
  address: `127.0.0.1:${service.httpPort}`,
  path: CREATE_PATH,
  messages: signer.creates(budget(ceiling.perSecond, 1, 32)).map((r) => r.binary),
  concurrency: 32,
  seconds: Math.min(1, plan.warmupSeconds),
});

for (const c of plan.concurrencies) {
  phases.push(await measure("REST create", c, restCreate(c, plan.seconds, expectedRate())));
}
for (const c of plan.concurrencies) {
  const bodies = signer.creates(budget(expectedRate(), plan.seconds, c)).map((r) => r.json);
  phases.push(
    await measure("Connect create", c, () =>
      runHttpLoad({
        url: publicUrl,
        method: "POST",
        path: CREATE_PATH,
        bodies,
        connections: c,
        seconds: plan.seconds,
      }),
    ),
  );
}
for (const c of plan.concurrencies) {
  const messages = signer.creates(budget(expectedRate(), plan.seconds, c)).map((r) => r.binary);
  phases.push(
    await measure("gRPC create", c, () =>
      runGrpcLoad({
        address: `127.0.0.1:${service.httpPort}`,
        path: CREATE_PATH,
        messages,
        concurrency: c,
        seconds: plan.seconds,
      }),
    ),
  );
}
for (const c of plan.concurrencies) {
  // As many tokens as the REST create phase managed at this concurrency, with headroom.
  const createRate = phases.find((p) => p.series === "REST create" && p.concurrency === c);
  const tokens = await seedTokens({
    store,
    users,
    count: budget(createRate?.throughput ?? ceiling.perSecond, plan.seconds, c),
    named: false,
    lifetimeMs: 3_600_000,
  });
  const bodies = signer.deletes(tokens).map((r) => r.json);
  phases.push(
    await measure("REST delete", c, () =>
      runHttpLoad({
        url: publicUrl,
        method: "DELETE",
        path: "/user/tokens",
        bodies,
        connections: c,
        seconds: plan.seconds,
      }),
    ),
  );
}

const peakOf = (series: Series) =>
  peakPhase(phases.filter((p) => p.series === series))?.throughput ?? 0;
const restPeak = peakOf("REST create");
const connectPeak = peakOf("Connect create");
const halfRate = Math.round(restPeak / 2);
const halfPeakBodies = signer.creates(budget(halfRate, plan.seconds, 64)).map((r) => r.json);
const halfPeak = await measure("REST create", 64, () =>
  runPacedHttpLoad({
    url: publicUrl,
    method: "POST",
    path: "/user/tokens",
    bodies: halfPeakBodies,
    rate: halfRate,
    seconds: plan.seconds,
    maxConnections: 64,
  }),
);

// Token checks: 10,000 live tokens of 1,000 users (half session, half named),
// written through the real store code, each checked over and over.
const checkUsers = newBenchUsers(plan.checkUsers);
await registerUsers(`http://127.0.0.1:${service.grpcPort}`, checkUsers);
const seedCheckTokens = (named: boolean) =>
  seedTokens({
    store,
    users: checkUsers,
    count: plan.checkTokens / 2,
    named,
    lifetimeMs: 3_600_000,
  });
const checkTokens = [...(await seedCheckTokens(false)), ...(await seedCheckTokens(true))].map(
  (t) => t.token,
);
const frames = introspectFrames(checkTokens);
const internalAddress = `127.0.0.1:${service.grpcPort}`;
const internalUrl = `http://${internalAddress}`;
await introspectLoad(internalAddress, frames, { concurrency: 32 }, plan.warmupSeconds)();
await bearerHttpLoad(internalUrl, checkTokens, { concurrency: 32 }, plan.warmupSeconds)();
for (const c of plan.concurrencies) {
  phases.push(
    await measure(
      "gRPC introspect",
      c,
      introspectLoad(internalAddress, frames, { concurrency: c }, plan.seconds),
    ),
  );
}
for (const c of plan.concurrencies) {
  phases.push(
    await measure(
      "Forward-auth",
      c,
      bearerHttpLoad(internalUrl, checkTokens, { concurrency: c }, plan.seconds),
    ),
  );
}
/** Half of the peak of `series` so far, as a paced load. */
const halfOf = (series: Series): CheckLoad => ({
  rate: Math.max(1, Math.round(peakOf(series) / 2)),
});
const introspectHalfPeak = await measure(
  "gRPC introspect",
  plan.concurrencies[plan.concurrencies.length - 1] ?? 128,
  introspectLoad(internalAddress, frames, halfOf("gRPC introspect"), plan.seconds),
);
const forwardAuthHalfPeak = await measure(
  "Forward-auth",
  PACED_HTTP_CONNECTIONS,
  bearerHttpLoad(internalUrl, checkTokens, halfOf("Forward-auth"), plan.seconds),
);

// Leak: REST creates in equal steps, RSS after each (signing between steps, not during).
const leak: BenchReport["leak"] = { requests: [], rssMb: [] };
for (let step = 1; step <= plan.leakSteps; step++) {
  const bodies = signer.creates(plan.leakStepRequests).map((r) => r.json);
  const result = await runHttpLoad({
    url: publicUrl,
    method: "POST",
    path: "/user/tokens",
    bodies,
    connections: plan.leakConcurrency,
    seconds: 0,
    amount: plan.leakStepRequests,
  });
  if (result.errors > 0) {
    log(`leak step ${step}: ${result.errors} errors ${JSON.stringify(result.failures)}`);
  }
  leak.requests.push(step * plan.leakStepRequests);
  leak.rssMb.push(mb(service.rssBytes()));
}
log(`leak: ${leak.requests.map((n, i) => `${n} → ${leak.rssMb[i]} MB`).join(", ")}`);

await service.stop();

// The floor: the same load, at the concurrency of the REST create peak,
// against a server that does only what every create must (bench/floor-server.ts).
const restPeakConcurrency =
  phases.find((p) => p.series === "REST create" && p.throughput === restPeak)?.concurrency ?? 32;
const floorDir = mkdtempSync(join(tmpdir(), "perps-bench-floor-"));
const floorKeysFile = join(floorDir, "keys.json");
writeFileSync(
  floorKeysFile,
  JSON.stringify(Object.fromEntries(users.map((u) => [u.userId, u.publicKeyHex]))),
);
const floorServer = await startServiceProcess({
  redisUrl: redis.url,
  main: "bench/floor-server.ts",
  env: { FLOOR_KEYS_FILE: floorKeysFile },
  ...(pinned ? { cpus: "0" } : {}),
});
const floorLoad = (seconds: number, perSecond: number) => {
  const bodies = signer.creates(budget(perSecond, seconds, restPeakConcurrency)).map((r) => r.json);
  return () =>
    runHttpLoad({
      url: `http://127.0.0.1:${floorServer.httpPort}`,
      method: "POST",
      path: "/user/tokens",
      bodies,
      connections: restPeakConcurrency,
      seconds,
    });
};
await floorLoad(plan.warmupSeconds, ceiling.perSecond)();
const floor = await measure(
  "Floor create",
  restPeakConcurrency,
  floorLoad(plan.seconds, ceiling.perSecond),
  floorServer,
);
// The tail at half of the floor's peak: how much of the service's tail at
// half its peak this machine and runtime would show anyway.
const floorHalfRate = Math.round(floor.throughput / 2);
const floorHalfBodies = signer.creates(budget(floorHalfRate, plan.seconds, 64)).map((r) => r.json);
const floorHalfPeak = await measure(
  "Floor create",
  64,
  () =>
    runPacedHttpLoad({
      url: `http://127.0.0.1:${floorServer.httpPort}`,
      method: "POST",
      path: "/user/tokens",
      bodies: floorHalfBodies,
      rate: floorHalfRate,
      seconds: plan.seconds,
      maxConnections: 64,
    }),
  floorServer,
);
await floorServer.stop();
rmSync(floorDir, { recursive: true, force: true });

// The check floor: forward-auth's loads against a server that does only one
// GET of the token's key (bench/check-floor-server.ts); its GET is its own
// command, not a script's.
const checkFloor = await startServiceProcess({
  redisUrl: redis.url,
  main: "bench/check-floor-server.ts",
  ...(pinned ? { cpus: "0" } : {}),
});
const checkFloorUrl = `http://127.0.0.1:${checkFloor.httpPort}`;
const floorGets = new Set(["get"]);
await bearerHttpLoad(checkFloorUrl, checkTokens, { concurrency: 32 }, plan.warmupSeconds)();
for (const c of plan.concurrencies) {
  phases.push(
    await measure(
      "Floor check",
      c,
      bearerHttpLoad(checkFloorUrl, checkTokens, { concurrency: c }, plan.seconds),
      checkFloor,
      floorGets,
    ),
  );
}
// Informational: the same floor over h2c gRPC, at IntrospectToken's peak
// concurrency, to tell node:http2's share of IntrospectToken from the service's.
const introspectPeakConcurrency =
  peakPhase(phases.filter((p) => p.series === "gRPC introspect"))?.concurrency ?? 32;
phases.push(
  await measure(
    "Floor check gRPC",
    introspectPeakConcurrency,
    introspectLoad(
      `127.0.0.1:${checkFloor.grpcPort}`,
      frames,
      { concurrency: introspectPeakConcurrency },
      plan.seconds,
    ),
    checkFloor,
    floorGets,
  ),
);
const checkFloorHalfPeak = await measure(
  "Floor check",
  PACED_HTTP_CONNECTIONS,
  bearerHttpLoad(checkFloorUrl, checkTokens, halfOf("Floor check"), plan.seconds),
  checkFloor,
  floorGets,
);
await checkFloor.stop();
await redis.stop();

const memory = await measureTokenMemory(plan.memoryUsers, plan.memoryTokensPerKind);
log(`redis memory per token: ${JSON.stringify(memory)}`);

const restCreatePhases = phases.filter((p) => p.series === "REST create");
const deletePhases = phases.filter((p) => p.series === "REST delete");
const maxTrips = (list: Phase[]) => Math.max(0, ...list.map((p) => p.redisRoundTrips));
const trend = rssTrend(leak.requests, leak.rssMb);
const checkHalfPeaks = [introspectHalfPeak, forwardAuthHalfPeak, checkFloorHalfPeak];
const allErrors = [...phases, halfPeak, floor, floorHalfPeak, ...checkHalfPeaks].reduce(
  (n, p) => n + p.errors,
  0,
);
const ratio = (a: number, b: number) => (b === 0 ? 0 : Math.round((a / b) * 100) / 100);
// What one process can serve when it has cores for its thread pool: the
// event loop is its only serial part (signatures are checked on the pool),
// so its CPU per REST create at its busiest bounds the process, whatever a
// load generator sharing the machine manages.
const leanestLoopUs = Math.min(
  ...restCreatePhases.filter((p) => p.concurrency > 1).map((p) => p.eventLoopCpuUsPerRequest),
);
const restCapacity = Math.round(1e6 / Math.max(1, leanestLoopUs));
const targets: Target[] = [
  {
    name: "REST create vs verify ceiling",
    goal: "≥ 0.60 × ceiling",
    measured: `${ratio(restPeak, ceiling.perSecond)} (${restPeak}/s vs ${ceiling.perSecond}/s)`,
    met: restPeak >= 0.6 * ceiling.perSecond,
  },
  {
    name: "REST create capacity of one process with cores for its thread pool (1 s ÷ event-loop CPU per request) vs verify ceiling",
    goal: "≥ 0.60 × ceiling",
    measured: `${ratio(restCapacity, ceiling.perSecond)} (${restCapacity}/s: ${leanestLoopUs} µs of event-loop CPU per request)`,
    met: restCapacity >= 0.6 * ceiling.perSecond,
  },
  {
    name: "Everything but the signature check (event-loop CPU per REST create) vs one verify",
    goal: "≤ 1 × verify",
    measured: `${ratio(leanestLoopUs, ceiling.microseconds)} (${leanestLoopUs} µs vs ${ceiling.microseconds} µs)`,
    met: leanestLoopUs <= ceiling.microseconds,
  },
  {
    name: "REST create vs Connect create",
    goal: "≥ 0.90",
    measured: `${ratio(restPeak, connectPeak)} (${restPeak}/s vs ${connectPeak}/s)`,
    met: restPeak >= 0.9 * connectPeak,
  },
  {
    name: "p99 at half of peak (REST create)",
    goal: "≤ 10 ms",
    measured: `${halfPeak.p99Ms} ms at ${halfPeak.throughput}/s (the floor at half its peak: ${floorHalfPeak.p99Ms} ms at ${floorHalfPeak.throughput}/s)`,
    met: halfPeak.p99Ms <= 10,
  },
  {
    name: "Redis round trips per create / delete",
    goal: "≤ 2",
    measured: `${maxTrips(restCreatePhases)} / ${maxTrips(deletePhases)}`,
    met: maxTrips(restCreatePhases) <= 2 && maxTrips(deletePhases) <= 2,
  },
  {
    name: "No leak (RSS after the last step vs after the first, on the least-squares line through every step)",
    goal: "≤ 1.10",
    measured: `${trend.ratio} (${trend.firstMb} → ${trend.lastMb} MB, ${leak.requests[0]} → ${leak.requests[leak.requests.length - 1]} requests)`,
    met: trend.ratio <= 1.1,
  },
  {
    name: "Redis memory per live session token",
    goal: "≤ 250 B",
    measured: `${memory.sessionBytesPerTokenSteady} B (named ${memory.namedBytesPerTokenSteady} B)`,
    met: memory.sessionBytesPerTokenSteady <= 250,
  },
  ...checkTargets({
    introspect: phases.filter((p) => p.series === "gRPC introspect"),
    forwardAuth: phases.filter((p) => p.series === "Forward-auth"),
    floor: phases.filter((p) => p.series === "Floor check"),
    introspectHalfPeak,
    forwardAuthHalfPeak,
    floorHalfPeak: checkFloorHalfPeak,
  }),
  { name: "Errors (all phases)", goal: "0", measured: String(allErrors), met: allErrors === 0 },
];

const redisVersion = execFileSync("redis-server", ["--version"], { encoding: "utf8" });
const report: BenchReport = {
  date: new Date().toISOString(),
  quick,
  machine: {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    pinned,
    node: process.version,
    redis: /v=(\S+)/.exec(redisVersion)?.[1] ?? "unknown",
  },
  verifyCeiling: ceiling,
  phases,
  halfPeak,
  floor,
  floorHalfPeak,
  checks: {
    users: plan.checkUsers,
    sessionTokens: plan.checkTokens / 2,
    namedTokens: plan.checkTokens / 2,
    halfPeaks: checkHalfPeaks,
  },
  leak,
  memory,
  targets,
};

mkdirSync(resultsDir, { recursive: true });
const stem = `${report.date.slice(0, 19).replace(/:/g, "-")}${quick ? "-quick" : ""}`;
const markdown = reportMarkdown(report);
const svg = reportSvg(report);
for (const name of [stem, quick ? "latest-quick" : "latest"]) {
  writeFileSync(join(resultsDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(resultsDir, `${name}.md`), markdown);
  writeFileSync(join(resultsDir, `${name}.svg`), svg);
}
log("");
log(markdown);
log(`wrote ${join(resultsDir, stem)}.{json,md,svg}`);

function tasksetWorks(): boolean {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
