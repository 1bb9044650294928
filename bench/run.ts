// `npm run bench [-- --quick] [-- --cpu-prof] [-- --pin] [-- --only=<phase,...>]`:
// the create/delete path under load against its ceiling and floor, the token
// checks against theirs, and this service against the Go peer. Each phase is
// a file of bench/phases/; the targets are one table (bench/targets.ts); a
// full run writes bench/results/latest.* and bench/README.md from them.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { hostFacts } from "../src/config/config.js";
import { createTokenStore } from "../src/store/token-store.js";
import { STORE_SETTINGS } from "../test/support/store-settings.js";
import { parseBenchArgs } from "./bench-args.js";
import type { BenchContext, MeasureOptions } from "./bench-context.js";
import { benchPlan } from "./bench-plan.js";
import type { BenchReport, Phase, Series } from "./bench-report.js";
import { newBenchUsers, registerUsers } from "./bench-users.js";
import type { LoadResult } from "./load-result.js";
import { selectPhases } from "./phases/index.js";
import { startBenchRedis } from "./redis-server.js";
import { commandCalls, redisCpuSeconds, roundTripsPerRequest } from "./redis-stats.js";
import { reportMarkdown } from "./report-markdown.js";
import { reportSvg } from "./report-svg.js";
import { runMain } from "./run-main.js";
import { seedTokens } from "./seed-tokens.js";
import { type ServiceProcess, startServiceProcess } from "./service-process.js";
import { createSigner } from "./signed-requests.js";
import { evaluateTargets } from "./targets.js";
import { measureVerifyCeiling } from "./verify-ceiling.js";
import { writeReadme } from "./write-readme.js";

const resultsDir = join(import.meta.dirname, "results");
const log = (text: string) => process.stdout.write(`${text}\n`);
const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

function tasksetWorks(): boolean {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const plan = benchPlan(args.quick);
  const phases = selectPhases(args.only);
  const host = hostFacts();
  log(
    `bench: ${args.quick ? "quick" : "full"} run on node ${process.version}, service at its defaults (${host.cores} workers, SO_REUSEPORT ${host.reusePortSupported ? "on" : "off"}), phases ${phases.map((p) => p.name).join(", ")}`,
  );
  // The ceiling first, on a quiet machine, in this same run.
  const ceiling = measureVerifyCeiling(plan.verifySeconds);
  log(`verify ceiling: ${ceiling.perSecond}/s (${ceiling.microseconds} µs)`);

  // `--pin`: the service gets CPU 0 to itself; this process (the load
  // generator) and the redis-server it starts (which inherits the affinity)
  // share CPU 1. It shows whether the service or the load generator is the
  // limit; unpinned, they compete for the same cores.
  const pinned = args.pin && cpus().length >= 2 && tasksetWorks();
  if (pinned) {
    execFileSync("taskset", ["-cp", "1", String(process.pid)], { stdio: "ignore" });
  }
  log(pinned ? "pinned: service on CPU 0, load generator and Redis on CPU 1" : "not pinned");
  const redis = await startBenchRedis();
  const serviceNodeFlags = args.cpuProf
    ? ["--cpu-prof", `--cpu-prof-dir=${join(resultsDir, "profiles")}`]
    : [];
  let service: ServiceProcess | undefined = phases.some((p) => p.needsService)
    ? await startServiceProcess({
        redisUrl: redis.url,
        nodeFlags: serviceNodeFlags,
        ...(pinned ? { cpus: "0" } : {}),
      })
    : undefined;
  const report: Pick<BenchReport, "phases"> & Partial<BenchReport> = { phases: [] };
  try {
    // Interrupted: stop the children too, so no service or redis-server is left behind.
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      process.once(signal, () => {
        Promise.allSettled([service?.stop(), redis.stop()]).then(() => process.exit(130));
      });
    }
    const users = newBenchUsers(plan.users);
    if (service !== undefined) {
      await registerUsers(`http://127.0.0.1:${service.internalPort}`, users);
    }
    const store = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis.client },
      rateLimitPerMinute: 1_000_000,
      maxActivePerUser: 1_000_000,
    });
    const checkUsers = newBenchUsers(plan.checkUsers);
    let checkTokens: Promise<string[]> | undefined;

    const ctx: BenchContext = {
      plan,
      pinned,
      floorProcesses: host.reusePortSupported ? host.cores : 1,
      log,
      ceiling,
      redis,
      service() {
        if (service === undefined) {
          throw new Error("the service is not running in this phase");
        }
        return service;
      },
      users,
      signer: createSigner(users),
      store,
      checkUsers,
      checkTokens() {
        // 10,000 live tokens of 1,000 users (half session, half named), written
        // through the real store code, each checked over and over.
        const seed = (named: boolean) =>
          seedTokens({
            store,
            users: checkUsers,
            count: plan.checkTokens / 2,
            named,
            lifetimeMs: 3_600_000,
          });
        checkTokens ??= (async () =>
          [...(await seed(false)), ...(await seed(true))].map((t) => t.token))();
        return checkTokens;
      },
      report,
      measure: (series, concurrency, run, opts) => measure(ctx, series, concurrency, run, opts),
    };

    for (const phase of phases) {
      if (!phase.needsService && service !== undefined) {
        await service.stop();
        service = undefined;
      }
      log(`— ${phase.name}`);
      const phaseStarted = performance.now();
      const { phases: rows = [], checks, ...rest } = await phase.run(ctx);
      log(`— ${phase.name}: ${Math.round((performance.now() - phaseStarted) / 1000)} s`);
      report.phases.push(...rows);
      Object.assign(report, rest);
      if (checks !== undefined) {
        report.checks = {
          ...checks,
          halfPeaks: [...(report.checks?.halfPeaks ?? []), ...checks.halfPeaks],
        };
      }
    }
  } finally {
    // A failed phase leaves no service or redis-server behind.
    await service?.stop();
    await redis.stop();
  }

  const redisVersion = execFileSync("redis-server", ["--version"], { encoding: "utf8" });
  const full: BenchReport = {
    ...report,
    date: new Date().toISOString(),
    quick: args.quick,
    ran: phases.map((p) => p.name),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? "unknown",
      pinned,
      node: process.version,
      workers: host.cores,
      reusePort: host.reusePortSupported,
      redis: /v=(\S+)/.exec(redisVersion)?.[1] ?? "unknown",
    },
    verifyCeiling: ceiling,
    targets: [],
    notMeasured: [],
  };
  Object.assign(full, evaluateTargets(full));

  // Only the latest results are kept (git history has the earlier ones);
  // a quick or partial run never overwrites a full run's.
  mkdirSync(resultsDir, { recursive: true });
  const partial = args.only !== undefined;
  const stem = `latest${partial ? "-partial" : ""}${args.quick ? "-quick" : ""}`;
  const markdown = reportMarkdown(full);
  writeFileSync(join(resultsDir, `${stem}.json`), `${JSON.stringify(full, null, 2)}\n`);
  writeFileSync(join(resultsDir, `${stem}.md`), markdown);
  writeFileSync(join(resultsDir, `${stem}.svg`), reportSvg(full));
  log("");
  log(markdown);
  log(`wrote ${join(resultsDir, stem)}.{json,md,svg}`);
  if (!args.quick && !partial) {
    log(`wrote ${writeReadme(join(resultsDir, "latest.json"))}`);
  }
}

/**
 * Runs one load, with the server's RSS and CPU, this process's CPU and the
 * Redis command counts and CPU around it; `clientIssued`: see roundTripsPerRequest.
 */
async function measure(
  ctx: BenchContext,
  series: Series,
  concurrency: number,
  run: () => Promise<LoadResult>,
  opts: MeasureOptions = {},
): Promise<Phase> {
  const server = opts.server ?? ctx.service();
  const redis = opts.redis ?? ctx.redis.client;
  const rssBefore = server.rssBytes();
  const cpuBefore = server.cpuSeconds();
  const mainBefore = server.mainThreadCpuSeconds();
  const ownBefore = process.cpuUsage();
  const redisBefore = await redisCpuSeconds(redis);
  const before = await commandCalls(redis);
  const result = await run();
  // Requests cut off by the end of the load still reach Redis; let them finish.
  await sleep(300);
  const after = await commandCalls(redis);
  const cpuAfter = server.cpuSeconds();
  const mainAfter = server.mainThreadCpuSeconds();
  const own = process.cpuUsage(ownBefore);
  const redisAfter = await redisCpuSeconds(redis);
  const answered = Math.max(1, result.ok + result.errors);
  const trips = roundTripsPerRequest(
    before,
    after,
    // Answered requests, plus those in flight when the load stopped (at most one per connection).
    result.ok +
      result.errors +
      Math.min(concurrency, Math.max(0, result.sent - result.ok - result.errors)),
    opts.clientIssued,
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
  ctx.log(
    `${series.padEnd(16)} c=${String(concurrency).padStart(3)}: ${String(phase.throughput).padStart(5)}/s p50 ${phase.p50Ms} p90 ${phase.p90Ms} p99 ${phase.p99Ms} ms, errors ${phase.errors}${phase.errors > 0 ? ` ${JSON.stringify(phase.failures)}` : ""}, RSS ${phase.rssAfterMb} MB, ${phase.redisRoundTrips} round trips, service CPU ${phase.serviceCpuUsPerRequest} µs/req (event loop ${phase.eventLoopCpuUsPerRequest}), load generator ${phase.loadGeneratorCpuUsPerRequest}, Redis ${phase.redisCpuUsPerRequest}`,
  );
  return phase;
}

await runMain("bench", main);
