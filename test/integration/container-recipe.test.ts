import assert from "node:assert/strict";
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { parseConfig } from "../../src/config/config.js";
import { freePorts } from "../../src/process/ports.js";
import {
  type Instruction,
  parseDockerfile,
  type ReplayedStage,
  replayStage,
} from "../support/dockerfile.js";
import { createFirstToken, sendMalformedProtobuf } from "../support/first-token.js";
import { killMainProcesses, type MainProcess } from "../support/main-process.js";
import { npmEnvironment } from "../support/packed-package.js";
import { copyInto, REPO_ROOT, repositoryFiles } from "../support/repository-copy.js";
import { startTestRedisServer, type TestRedis } from "../support/test-redis.js";

// No container engine runs here: the Dockerfile's stages are replayed in temp
// folders (its WORKDIR, ENV, COPY and RUN lines, on this machine's node and
// npm, from npm's cache), and the final stage's CMD is started against a
// test redis-server and used. Change the Dockerfile's commands and this test
// runs the new ones.

const DOCKERFILE = join(REPO_ROOT, "Dockerfile");

const execFileAsync = promisify(execFile);

/** The tests of malformed protobuf, run in the build stage's install (issue 21). */
const MALFORMED_TESTS = [
  "test/unit/server/wire/connect-handler-parity.test.ts",
  "test/integration/refusal-telemetry.test.ts",
];

/** The exec form of CMD or HEALTHCHECK's CMD, as argv. */
function argvOf(instruction: Instruction | undefined, what: string): string[] {
  assert.ok(instruction !== undefined, `the final stage has a ${what}`);
  const text = instruction.exec ? JSON.stringify(instruction.args) : (instruction.args[0] ?? "");
  const json = text.replace(/^CMD\s+/, "");
  assert.ok(json.startsWith("["), `${what} in exec form (no shell in the way of signals)`);
  return JSON.parse(json) as string[];
}

function exitCodeOf(argv: string[], cwd: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const [command = "", ...args] = argv;
    const child = spawn(command, args, { cwd, env, stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", (code) => resolve(code ?? -1));
  });
}

describe("the container recipe (Dockerfile replayed without a container engine)", () => {
  let root: string;
  let redis: TestRedis;
  let build: ReplayedStage | undefined;
  let final: ReplayedStage;
  const stages: Record<string, ReplayedStage> = {};
  let run: MainProcess | undefined;
  // npm as in the image, but from this machine's cache: no registry needed, and fast.
  const npmCache = execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim();

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "perps-container-"));
    mkdirSync(join(root, "home"));
    redis = await startTestRedisServer();
  });
  after(async () => {
    if (run !== undefined && run.child.exitCode === null) {
      run.child.kill("SIGKILL");
    }
    killMainProcesses();
    await redis?.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it("the build stage and the production install run as written", async () => {
    const parsed = parseDockerfile(DOCKERFILE);
    assert.ok(parsed.length >= 2, "multi-stage: a build stage and a final one");
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: join(root, "home"),
      npm_config_cache: npmCache,
      npm_config_prefer_offline: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
    };
    for (const stage of parsed) {
      stages[stage.name] = await replayStage(stage, {
        context: REPO_ROOT,
        dir: join(root, `stage-${stage.name}`),
        stages,
        env,
      });
    }
    build = stages[parsed[0]?.name ?? ""];
    final = stages[parsed.at(-1)?.name ?? ""] as ReplayedStage;
    // A production install: compiled JavaScript, no compiler, no TypeScript runner.
    assert.ok(existsSync(join(final.dir, "dist/main.js")), "dist/ from the build stage");
    assert.equal(existsSync(join(final.dir, "src")), false, "no sources");
    for (const dev of ["typescript", "tsx", "@biomejs/biome", "esbuild"]) {
      assert.equal(
        existsSync(join(final.dir, "node_modules", dev)),
        false,
        `${dev} is not installed`,
      );
    }
    assert.equal(final.env.NODE_ENV, "production");
    const user = final.recorded.USER?.args[0] ?? "root";
    assert.doesNotMatch(user, /^(root|0)(:|$)/, "runs as a non-root user");
    // node_modules is as npm installed it: @connectrpc/connect still says INTERNAL for a
    // malformed message (the service answers INVALID_ARGUMENT itself, below).
    const serialization = readFileSync(
      join(final.dir, "node_modules/@connectrpc/connect/dist/esm/protocol/serialization.js"),
      "utf8",
    );
    assert.match(serialization, /parse binary: \$\{m\}`, Code\.Internal\)/);
  });

  it("the build stage's install ran no script, and the malformed-protobuf tests of every protocol pass in it", async () => {
    // Issue 21: nothing in node_modules is edited, so an install that runs no
    // script at all (the build stage's `npm ci --ignore-scripts`), then the
    // build, answers malformed messages as `npm ci` does. The stage holds the
    // sources it builds from; the rest of the checkout (the tests, the files
    // they read) is added beside them, and nothing it built is touched.
    assert.ok(build !== undefined, "the stages were replayed");
    assert.match(
      readFileSync(
        join(build.dir, "node_modules/@connectrpc/connect/dist/esm/protocol/serialization.js"),
        "utf8",
      ),
      /parse binary: \$\{m\}`, Code\.Internal\)/,
      "@connectrpc/connect as published",
    );
    const dir = build.dir;
    copyInto(
      dir,
      repositoryFiles().filter((file) => !existsSync(join(dir, file))),
    );
    const { stdout } = await execFileAsync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--import",
        "./test/support/warnings-fail.ts",
        "--test",
        "--test-reporter=spec",
        "--test-concurrency=1",
        ...MALFORMED_TESTS,
      ],
      // Without the test runner's mark, or the nested `node --test` would report to this runner.
      { cwd: dir, env: npmEnvironment(), maxBuffer: 16 * 1024 * 1024 },
    ).catch((err: { stdout?: string }) =>
      assert.fail(`the tests failed:\n${err.stdout ?? String(err)}`),
    );
    assert.match(stdout, /^ℹ fail 0$/m);
    const passed = Number(/^ℹ pass (\d+)$/m.exec(stdout)?.[1]);
    assert.ok(passed > 100, `${passed} tests passed`);
    assert.match(stdout, /a malformed message: INVALID_ARGUMENT, where Connect says INTERNAL/);
    assert.match(stdout, /gRPC: a malformed message is INVALID_ARGUMENT/);
  });

  it("the final stage's CMD serves against a Redis, creates a token, and its HEALTHCHECK passes", async () => {
    assert.ok(final !== undefined, "the stages were replayed");
    const [publicPort, internalPort] = await freePorts(2);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: join(root, "home"),
      ...final.env,
      // The image listens on 0.0.0.0; here, only locally.
      HOST: "127.0.0.1",
      PUBLIC_PORT: String(publicPort),
      INTERNAL_PORT: String(internalPort),
      REDIS_URL: redis.url,
    };
    const [command = "", ...args] = argvOf(final.recorded.CMD, "CMD");
    const child = spawn(command, args, { cwd: final.dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) =>
      child.once("exit", (code) => resolve(code)),
    );
    try {
      const deadline = Date.now() + 15_000;
      while (!output.includes('"msg":"listening"')) {
        assert.ok(Date.now() < deadline && child.exitCode === null, `did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const publicUrl = `http://127.0.0.1:${publicPort}`;
      const internalUrl = `http://127.0.0.1:${internalPort}`;
      // No ADMIN_CREDENTIALS_FILE: the first start generated operator `local` in the data folder.
      const secret = readFileSync(join(final.dir, ".data/redis/operator-secret"), "utf8").trim();
      const first = await createFirstToken({ publicUrl, internalUrl }, "container", secret);
      assert.equal(first.putStatus, 200);
      assert.equal(first.createStatus, 201, JSON.stringify(first.body));
      const auth = await fetch(`${internalUrl}/auth`, {
        headers: { authorization: `Bearer ${first.body.token}` },
      });
      assert.equal(auth.status, 200);
      assert.equal(auth.headers.get("x-token-id"), first.body.id);
      // Malformed protobuf is INVALID_ARGUMENT (src/server/wire/), not INTERNAL.
      const malformed = await sendMalformedProtobuf(publicUrl);
      assert.equal(malformed.status, 400, await malformed.text());

      const healthcheck = final.recorded.HEALTHCHECK;
      assert.match(healthcheck?.args[0] ?? "", /^CMD \["node",/, "HEALTHCHECK runs node itself");
      const probe = argvOf(healthcheck, "HEALTHCHECK");
      assert.equal(await exitCodeOf(probe, final.dir, env), 0, "healthy while it serves");
      child.kill("SIGTERM");
      assert.equal(await exited, 0, output);
      assert.equal(await exitCodeOf(probe, final.dir, env), 1, "unhealthy once stopped");
    } finally {
      if (child.exitCode === null) {
        child.kill("SIGKILL");
      }
    }
  });

  it("compose.yaml runs it with a real Redis keeping an append-only file on a named volume", () => {
    const compose = readFileSync(join(REPO_ROOT, "compose.yaml"), "utf8");
    assert.match(compose, /^\s+image: redis:/m);
    assert.match(compose, /--appendonly\s*\n\s*- "yes"/);
    assert.match(compose, /^\s+- redis-data:\/data$/m);
    assert.match(compose, /^volumes:\n\s+redis-data:/m);
    assert.match(compose, /^\s+build: \.$/m);
    assert.match(compose, /REDIS_URL: redis:\/\/redis:6379/);
    // The ports compose publishes are the ones the image exposes and listens on (the defaults).
    const expose = parseDockerfile(DOCKERFILE)
      .at(-1)
      ?.instructions.find((i) => i.keyword === "EXPOSE")?.args[0];
    const { publicPort, internalPort } = parseConfig({});
    assert.equal(expose, `${publicPort} ${internalPort}`);
    assert.match(compose, new RegExp(`:${publicPort}:${publicPort}"`));
    assert.match(compose, new RegExp(`- "${internalPort}"`));
  });
});
