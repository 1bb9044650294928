// `npx tsx bench/profile.ts [--connect]`: the service under --cpu-prof, REST
// create at concurrency 32 for a while, then where its CPU time went
// (bench/results/profiles/*.cpuprofile, open in Chrome DevTools).
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { newBenchUsers, registerUsers } from "./bench-users.js";
import { runHttpLoad } from "./http-load.js";
import { summarizeProfile } from "./profile-summary.js";
import { startBenchRedis } from "./redis-server.js";
import { startServiceProcess } from "./service-process.js";
import { createSigner } from "./signed-requests.js";

const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? "10");
const path = process.argv.includes("--connect")
  ? "/perps.token.v1.TokenService/CreateToken"
  : "/user/tokens";
const dir = join(import.meta.dirname, "results", "profiles");
rmSync(dir, { recursive: true, force: true });

const redis = await startBenchRedis();
const service = await startServiceProcess({
  redisUrl: redis.url,
  nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
});
const users = newBenchUsers(500);
await registerUsers(`http://127.0.0.1:${service.grpcPort}`, users);
const signer = createSigner(users);
const bodies = signer.creates(12_000 * SECONDS).map((r) => r.json);
const result = await runHttpLoad({
  url: `http://127.0.0.1:${service.httpPort}`,
  method: "POST",
  path,
  bodies,
  connections: 32,
  seconds: SECONDS,
});
process.stdout.write(`${path}: ${result.throughput}/s, errors ${result.errors}\n`);
await service.stop();
await redis.stop();
for (const file of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
  process.stdout.write(summarizeProfile(join(dir, file), 40));
}
