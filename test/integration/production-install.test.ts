import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, realpathSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePorts } from "../../src/process/ports.js";
import { buildIfStale } from "../support/build.js";
import {
  createFirstToken,
  malformedProtobufGrpcStatus,
  sendMalformedProtobuf,
} from "../support/first-token.js";
import { killMainProcesses, type MainProcess, startNpmStart } from "../support/main-process.js";
import { OPENAPI_GENERATOR } from "../support/openapi-modules.js";
import { runNpm } from "../support/packed-package.js";
import { copyInto, distFolders, REPO_ROOT, repositoryFiles } from "../support/repository-copy.js";
import { startTestRedisServer, type TestRedis } from "../support/test-redis.js";

// docs/running.md, "A production install": a checkout whose dist/ a build
// stage made, `npm ci --omit=dev --ignore-scripts`, then `npm start`. Here
// the checkout is a temp copy of the repository's files and built dist/
// folders, and npm installs from this machine's cache (`--offline`: the
// repository's `npm ci` filled it, so no registry is needed).

describe("a production install: npm ci --omit=dev, then npm start", () => {
  let dir: string;
  let redis: TestRedis;
  let run: MainProcess;
  let publicUrl: string;
  let internalUrl: string;

  before(async () => {
    buildIfStale();
    dir = realpathSync(mkdtempSync(join(tmpdir(), "perps-production-")));
    copyInto(dir, repositoryFiles());
    // Copied after the sources, as a build stage's dist/ would be.
    for (const dist of distFolders()) {
      cpSync(join(REPO_ROOT, dist), join(dir, dist), { recursive: true });
    }
    runNpm(["ci", "--omit=dev", "--ignore-scripts", "--offline"], dir);
    // The OpenAPI generator is build-time code: the service must run without it.
    rmSync(join(dir, OPENAPI_GENERATOR), { recursive: true });
    // A source newer than the build: prestart finds dist/ stale, has no
    // compiler, and must run the dist/ it has.
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dir, "src/main.ts"), later, later);
    redis = await startTestRedisServer();
    const [publicPort, internalPort] = await freePorts(2);
    publicUrl = `http://127.0.0.1:${publicPort}`;
    internalUrl = `http://127.0.0.1:${internalPort}`;
    run = startNpmStart(
      {
        REDIS_URL: redis.url,
        PUBLIC_PORT: String(publicPort),
        INTERNAL_PORT: String(internalPort),
        WORKERS: "1",
      },
      dir,
    );
    await run.waitFor(/"msg":"listening"/);
  });
  after(async () => {
    killMainProcesses();
    await redis?.dispose();
    if (dir !== undefined) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("installs the runtime dependencies only: no TypeScript, tsx, esbuild or biome", () => {
    for (const dependency of ["ioredis", "pino", "@connectrpc/connect-node", "sodium-native"]) {
      assert.ok(existsSync(join(dir, "node_modules", dependency)), dependency);
    }
    for (const dev of ["typescript", "tsx", "esbuild", "@biomejs/biome", "@bufbuild/buf"]) {
      assert.equal(existsSync(join(dir, "node_modules", dev)), false, `${dev} is installed`);
    }
  });

  it("prestart keeps the built dist/ (no compiler to rebuild it with), and the service listens", () => {
    assert.match(
      run.output(),
      /TypeScript is not installed \(--omit=dev\?\): keeping the existing dist\//,
    );
    assert.match(run.output(), /"msg":"listening"/);
  });

  it("answers /healthz, registers a key and creates a token over REST", async () => {
    assert.equal((await fetch(`${publicUrl}/healthz`)).status, 200);
    const first = await createFirstToken({ publicUrl, internalUrl }, "production");
    assert.equal(first.putStatus, 200);
    assert.equal(first.createStatus, 201, JSON.stringify(first.body));
    assert.match(first.body.token ?? "", /^pt_/);
    // The OpenAPI document, though its generator was removed.
    const openApi = await fetch(`${publicUrl}/openapi.json`);
    assert.equal(openApi.status, 200);
    assert.match(await openApi.text(), /"maximum":31536000/);
  });

  it("answers a malformed protobuf body INVALID_ARGUMENT on Connect (400), gRPC and gRPC-Web, with no install script run", async () => {
    const malformed = await sendMalformedProtobuf(publicUrl);
    const body = (await malformed.json()) as { code?: string };
    assert.equal(malformed.status, 400, JSON.stringify(body));
    assert.equal(body.code, "invalid_argument");
    // gRPC and gRPC-Web alike, with node_modules exactly as npm installed it.
    assert.deepEqual(await malformedProtobufGrpcStatus(publicUrl), { grpc: "3", grpcWeb: "3" });
  });

  it("stops cleanly on SIGTERM: npm and the service exit 0", async () => {
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0, run.output());
    assert.match(run.output(), /"msg":"stopped"/);
  });
});
