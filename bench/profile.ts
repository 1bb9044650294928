// `npx tsx bench/profile.ts [--connect | --grpc-create | --introspect | --forward-auth]`:
// the service under --cpu-prof for a while at concurrency 32 (REST create by
// default; Connect create; gRPC create over 4 HTTP/2 connections; IntrospectToken over gRPC or forward-auth against
// 10,000 seeded tokens of 1,000 users), then where its CPU time went
// (bench/results/profiles/*.cpuprofile, open in Chrome DevTools).
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createTokenStore } from "../src/store/token-store.js";
import { STORE_SETTINGS } from "../test/support/store-settings.js";
import { newBenchUsers, registerUsers } from "./bench-users.js";
import { bearerHttpLoad, introspectFrames, introspectLoad } from "./check-loads.js";
import { grpcCreated } from "./create-answers.js";
import { grpcFrame } from "./grpc-frame.js";
import { runHttpLoad } from "./http-load.js";
import type { LoadResult } from "./load-result.js";
import { CREATE_PATH } from "./phases/create.js";
import { summarizeProfile } from "./profile-summary.js";
import { runRawGrpcLoad } from "./raw-grpc-load.js";
import { startBenchRedis } from "./redis-server.js";
import { seedTokens } from "./seed-tokens.js";
import { startServiceProcess } from "./service-process.js";
import { createSigner } from "./signed-requests.js";

const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? "10");
const CONCURRENCY = 32;
const mode = (["--connect", "--grpc-create", "--introspect", "--forward-auth"] as const).find(
  (flag) => process.argv.includes(flag),
);
const dir = join(import.meta.dirname, "results", "profiles");
rmSync(dir, { recursive: true, force: true });

const redis = await startBenchRedis();
const service = await startServiceProcess({
  redisUrl: redis.url,
  // One process, so that one profile holds every request.
  env: { WORKERS: "1" },
  nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
});
const internal = `127.0.0.1:${service.internalPort}`;
let result: LoadResult;
if (mode === "--introspect" || mode === "--forward-auth") {
  const users = newBenchUsers(1000);
  await registerUsers(`http://${internal}`, users);
  const store = createTokenStore({
    ...STORE_SETTINGS,
    redis: { client: redis.client },
    rateLimitPerMinute: 1_000_000,
    maxActivePerUser: 1_000_000,
  });
  const seed = (named: boolean) =>
    seedTokens({ store, users, count: 5000, named, lifetimeMs: 3_600_000 });
  const tokens = [...(await seed(false)), ...(await seed(true))].map((t) => t.token);
  const load = { concurrency: CONCURRENCY };
  result = await (mode === "--introspect"
    ? introspectLoad(internal, introspectFrames(tokens), load, SECONDS)
    : bearerHttpLoad(`http://${internal}`, tokens, load, SECONDS))();
} else if (mode === "--grpc-create") {
  const users = newBenchUsers(500);
  await registerUsers(`http://${internal}`, users);
  const signer = createSigner(users);
  result = await runRawGrpcLoad({
    address: `127.0.0.1:${service.publicPort}`,
    path: CREATE_PATH,
    frames: signer.creates(12_000 * SECONDS).map((r) => grpcFrame(r.binary)),
    once: true,
    concurrency: CONCURRENCY,
    connections: 4,
    seconds: SECONDS,
    accept: grpcCreated,
  });
} else {
  const users = newBenchUsers(500);
  await registerUsers(`http://${internal}`, users);
  const signer = createSigner(users);
  result = await runHttpLoad({
    url: `http://127.0.0.1:${service.publicPort}`,
    method: "POST",
    path: mode === "--connect" ? "/perps.token.v1.TokenService/CreateToken" : "/user/tokens",
    bodies: signer.creates(12_000 * SECONDS).map((r) => r.json),
    connections: CONCURRENCY,
    seconds: SECONDS,
  });
}
process.stdout.write(`${mode ?? "REST create"}: ${result.throughput}/s, errors ${result.errors}\n`);
await service.stop();
await redis.stop();
for (const file of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
  process.stdout.write(summarizeProfile(join(dir, file), 40));
}
