// `npm run bench:ladder [-- --path=introspect,forward-auth,grpc-create,rest-create]
// [-- --lookup=memory|redis] [-- --quick] [-- --concurrency=32] [-- --rounds=N] [-- --seconds=S] [-- --label=L]`: for
// each path, every step of its ladder (bench/ladder/ladder-steps.ts) as a
// running server, the service (WORKERS=1) as the last step, all under the
// same load, steps alternating in rounds (A B C … A B C …); per step the
// median of the rounds: req/s, µs of the server's CPU per answered request,
// and the delta to the step below. Every step is one process, the service
// too (WORKERS=1), so ratios compare like with like. `--lookup=memory` (the
// default) prices the checks' cached path: the floor remembers each token's
// record after one read, the store step and the service keep the token cache;
// `--lookup=redis` reads Redis on every check, the service with TOKEN_CACHE=off.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTokenStore } from "../../src/store/token-store.js";
import { STORE_SETTINGS } from "../../test/support/store-settings.js";
import { budget } from "../bench-context.js";
import { newBenchUsers, registerUsers } from "../bench-users.js";
import { bearerHttpLoad, INTROSPECT_PATH, introspectFrames } from "../check-loads.js";
import { grpcCreated, restCreated } from "../create-answers.js";
import { grpcFrame } from "../grpc-frame.js";
import type { LoadResult } from "../load-result.js";
import { CREATE_PATH } from "../phases/create.js";
import { runRawGrpcLoad } from "../raw-grpc-load.js";
import { runRawHttpLoad } from "../raw-http-load.js";
import { startBenchRedis } from "../redis-server.js";
import { runMain } from "../run-main.js";
import { seedTokens } from "../seed-tokens.js";
import { type ServiceProcess, startServiceProcess } from "../service-process.js";
import { createSigner } from "../signed-requests.js";
import {
  type LadderResult,
  ladderMarkdown,
  type StepRun,
  summarizeLadder,
} from "./ladder-report.js";
import { isLadderPath, LADDER_PATHS, LADDER_STEPS, type LadderPath } from "./ladder-steps.js";

const log = (text: string) => process.stdout.write(`${text}\n`);
const resultsDir = join(import.meta.dirname, "..", "results");

interface LadderArgs {
  paths: LadderPath[];
  /** Appended to the results' names (`ladder-<path>-<label>`), so that a second run keeps the first. */
  label: string | undefined;
  /** Where checks find a token's record after its first read. */
  lookup: "memory" | "redis";
  quick: boolean;
  concurrency: number;
  rounds: number;
  seconds: number;
}

function parseLadderArgs(argv: readonly string[]): LadderArgs {
  const value = (name: string) =>
    argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const quick = argv.includes("--quick");
  const names = (value("path") ?? LADDER_PATHS.join(",")).split(",").filter((n) => n !== "");
  const unknown = names.filter((n) => !isLadderPath(n));
  if (unknown.length > 0) {
    throw new Error(`--path takes ${LADDER_PATHS.join(", ")}; got ${unknown.join(", ")}`);
  }
  for (const arg of argv) {
    if (arg !== "--quick" && !/^--(path|concurrency|rounds|seconds|label|lookup)=/.test(arg)) {
      throw new Error(`unknown argument ${arg}`);
    }
  }
  const lookup = value("lookup") ?? "memory";
  if (lookup !== "memory" && lookup !== "redis") {
    throw new Error(`--lookup takes memory or redis; got ${lookup}`);
  }
  return {
    paths: names.filter(isLadderPath),
    label: value("label"),
    lookup,
    quick,
    concurrency: Number(value("concurrency") ?? 32),
    rounds: Number(value("rounds") ?? (quick ? 3 : 5)),
    seconds: Number(value("seconds") ?? (quick ? 2 : 5)),
  };
}

/** Runs one load against a server, with its CPU around it. */
async function measured(server: ServiceProcess, run: () => Promise<LoadResult>) {
  const cpuBefore = server.cpuSeconds();
  const result = await run();
  const cpu = server.cpuSeconds() - cpuBefore;
  return { result, cpuUsPerRequest: Math.round((cpu * 1e6) / Math.max(1, result.ok)) };
}

async function climb(path: LadderPath, args: LadderArgs): Promise<LadderResult> {
  const redis = await startBenchRedis();
  const workDir = mkdtempSync(join(tmpdir(), "perps-ladder-"));
  const servers: ServiceProcess[] = [];
  const stopAll = () => Promise.allSettled([...servers.map((s) => s.stop()), redis.stop()]);
  // Interrupted: no server or redis-server is left behind.
  const onSignal = () => {
    stopAll().then(() => process.exit(130));
  };
  process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
  try {
    const service = await startServiceProcess({
      redisUrl: redis.url,
      env: { WORKERS: "1", TOKEN_CACHE: args.lookup === "memory" ? "on" : "off" },
    });
    // Stopped in `finally` from here on, even if a later one fails to start.
    servers.push(service);
    const users = newBenchUsers(path === "introspect" || path === "forward-auth" ? 1_000 : 200);
    await registerUsers(`http://127.0.0.1:${service.internalPort}`, users);
    const keysFile = join(workDir, "keys.json");
    writeFileSync(
      keysFile,
      JSON.stringify(Object.fromEntries(users.map((u) => [u.userId, u.publicKeyHex]))),
    );
    const steps = LADDER_STEPS[path];
    // Every rung runs for the whole climb (the idle ones cost nothing), started
    // one at a time: a dozen tsx processes starting at once on a busy machine
    // miss their start deadline.
    for (let i = 0; i < steps.length - 1; i++) {
      servers.splice(
        i,
        0,
        await startServiceProcess({
          redisUrl: redis.url,
          main: "bench/ladder/ladder-server.ts",
          args: [`--path=${path}`, `--step=${i}`],
          env: { LADDER_KEYS_FILE: keysFile, LADDER_LOOKUP: args.lookup },
        }),
      );
    }
    const load = await loadOf(path, args, users, { client: redis.client }, servers, service);
    log(
      `ladder ${path}: ${steps.length} steps, lookup from ${args.lookup}, c=${args.concurrency}, ${args.rounds} rounds of ${args.seconds} s`,
    );
    for (let i = 0; i < servers.length; i++) {
      await load(i, 1)();
    }
    const runs: StepRun[][] = steps.map(() => []);
    for (let round = 0; round < args.rounds; round++) {
      for (let i = 0; i < servers.length; i++) {
        const server = servers[i];
        if (server === undefined) {
          continue;
        }
        const { result, cpuUsPerRequest } = await measured(server, load(i, args.seconds));
        runs[i]?.push({
          throughput: result.throughput,
          cpuUsPerRequest,
          p99Ms: result.p99Ms,
          errors: result.errors,
          failures: result.failures,
        });
        log(
          `round ${round + 1} ${steps[i]?.layer.padEnd(15)} ${String(result.throughput).padStart(6)}/s ${String(cpuUsPerRequest).padStart(4)} µs/req p99 ${result.p99Ms} ms errors ${result.errors}`,
        );
      }
    }
    return summarizeLadder({
      path,
      date: new Date().toISOString(),
      node: process.version,
      lookup: args.lookup,
      quick: args.quick,
      concurrency: args.concurrency,
      rounds: args.rounds,
      seconds: args.seconds,
      steps,
      runs,
    });
  } finally {
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    await stopAll();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The path's load against server `i` for `seconds`: the bench's own generators and requests. */
async function loadOf(
  path: LadderPath,
  args: LadderArgs,
  users: ReturnType<typeof newBenchUsers>,
  redisClient: Parameters<typeof createTokenStore>[0]["redis"],
  servers: readonly ServiceProcess[],
  service: ServiceProcess,
): Promise<(i: number, seconds: number) => () => Promise<LoadResult>> {
  // The service serves checks on its internal listener, creates on its public one.
  const portOf = (i: number) => {
    const server = servers[i];
    if (server === undefined) {
      throw new Error(`no server for step ${i}`);
    }
    return server === service && (path === "introspect" || path === "forward-auth")
      ? server.internalPort
      : server.publicPort;
  };
  const concurrency = args.concurrency;
  if (path === "introspect" || path === "forward-auth") {
    const store = createTokenStore({
      ...STORE_SETTINGS,
      redis: redisClient,
      rateLimitPerMinute: 1_000_000,
      maxActivePerUser: 1_000_000,
    });
    const seeded = await seedTokens({
      store,
      users,
      count: 10_000,
      named: false,
      lifetimeMs: 3_600_000,
    });
    const tokens = seeded.map((t) => t.token);
    const frames = introspectFrames(tokens);
    return (i, seconds) =>
      path === "introspect"
        ? () =>
            runRawGrpcLoad({
              address: `127.0.0.1:${portOf(i)}`,
              path: INTROSPECT_PATH,
              frames,
              concurrency,
              seconds,
              accept: (length) => length > 0,
            })
        : bearerHttpLoad(`http://127.0.0.1:${portOf(i)}`, tokens, { concurrency }, seconds);
  }
  const signer = createSigner(users);
  // Pre-signed just before each load (each request used once, within the time window).
  const perSecond = 8_000;
  return (i, seconds) => {
    const signed = signer.creates(budget(perSecond, seconds, concurrency));
    return path === "grpc-create"
      ? () =>
          runRawGrpcLoad({
            address: `127.0.0.1:${portOf(i)}`,
            path: CREATE_PATH,
            frames: signed.map((r) => grpcFrame(r.binary)),
            once: true,
            concurrency,
            seconds,
            accept: grpcCreated,
          })
      : () =>
          runRawHttpLoad({
            url: `http://127.0.0.1:${portOf(i)}`,
            method: "POST",
            path: "/user/tokens",
            bodies: signed.map((r) => r.json),
            connections: concurrency,
            seconds,
            accept: restCreated,
          });
  };
}

async function main(): Promise<void> {
  const args = parseLadderArgs(process.argv.slice(2));
  mkdirSync(resultsDir, { recursive: true });
  for (const path of args.paths) {
    const result = await climb(path, args);
    const markdown = ladderMarkdown(result);
    const stem = join(
      resultsDir,
      `ladder-${path}${args.label === undefined ? "" : `-${args.label}`}`,
    );
    writeFileSync(`${stem}.json`, `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(`${stem}.md`, markdown);
    log("");
    log(markdown);
    log(`wrote ${stem}.{json,md}`);
  }
}

await runMain("bench:ladder", main);
