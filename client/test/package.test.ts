import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import vm from "node:vm";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import * as esbuild from "esbuild";
import {
  addLockedDependency,
  CLIENT_DIR,
  createConsumerProject,
  npmEnvironment,
  npmWarnings,
  packClient,
  runNpm,
} from "../../test/support/packed-package.js";
import { createOperatorGrpcClient } from "../../test/support/test-operator.js";
import { startTestRedis, type TestRedis } from "../../test/support/test-redis.js";
import { startTestService, type TestService } from "../../test/support/test-service.js";
import { Code, createTokenClient, signerFromPem } from "../src/sdk/index.js";
import {
  BROWSER_CONSUMER,
  type BrowserOutcome,
  CJS_CONSUMER,
  ESM_CONSUMER,
  GLOBAL_CONSUMER,
  type NodeOutcome,
  opensslKey,
  pageGlobals,
  TYPED_CJS,
  TYPED_ESM,
} from "./support/package-consumers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

describe("the client package, packed and installed by another project", () => {
  let dir: string;
  let consumer: string;
  let redis: TestRedis;
  let service: TestService;
  /** What npm wrote to stderr while installing the tarball. */
  let installWarnings = "";
  const keyFile = () => join(dir, "key.pem");
  const userId = "0b5e7c1a-5a4f-4d7e-9a49-0c2d9b1f6e01";

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "perps-sdk-package-"));
    consumer = join(dir, "consumer");
    const tarball = packClient(dir);
    createConsumerProject(consumer, tarball);
    installWarnings = npmWarnings(
      ["install", "--offline", "--no-audit", "--no-fund", `../${tarball}`],
      consumer,
    );
    redis = await startTestRedis();
    service = await startTestService({ redisUrl: redis.url });
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    try {
      await keys.putUserKey({ userId, publicKey: await opensslKey(keyFile()) });
    } finally {
      keys.close();
    }
  });
  after(async () => {
    await service?.stop();
    await redis?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("installs from the tarball without a warning (no install script to allow)", () => {
    assert.equal(installWarnings, "");
    const shipped = JSON.parse(
      readFileSync(join(consumer, "node_modules/@perps/token-client/package.json"), "utf8"),
    ) as { scripts?: Record<string, string> };
    for (const script of ["preinstall", "install", "postinstall", "prepare"]) {
      assert.equal(shipped.scripts?.[script], undefined, script);
    }
  });

  it("installs from its folder in a checkout without a warning", () => {
    const project = join(dir, "from-folder");
    mkdirSync(project);
    runNpm(["init", "-y"], project);
    assert.equal(
      npmWarnings(["install", "--offline", "--no-audit", "--no-fund", CLIENT_DIR], project),
      "",
    );
    assert.ok(existsSync(join(project, "node_modules/@perps/token-client/dist/sdk/index.js")));
  });

  it("ships the compiled build and no sources, scripts, tests or build stamp", () => {
    const installed = join(consumer, "node_modules/@perps/token-client");
    for (const file of [
      "dist/sdk/index.js",
      "dist/sdk/index.d.ts",
      "dist/cjs/sdk/node.js",
      "dist/cjs/sdk/node.d.ts",
      "dist/cjs/package.json",
      "dist/protocol/index.js",
      "dist/cli/perps-tokens.js",
      "dist/browser/index.js",
      "dist/browser/index.global.js",
      "README.md",
    ]) {
      assert.ok(existsSync(join(installed, file)), `${file} is missing`);
    }
    for (const file of ["src", "scripts", "test", "dist/.built", "tsconfig.json", "dist/main.js"]) {
      assert.equal(existsSync(join(installed, file)), false, `${file} was shipped`);
    }
  });

  it("installs only what a client needs: none of the service's dependencies", () => {
    const tree = JSON.parse(runNpm(["ls", "--omit=dev", "--all", "--json"], consumer)) as {
      dependencies?: Record<string, unknown>;
    };
    const names = new Set<string>();
    // An optional peer that is not installed is listed as an empty node: not counted.
    const walk = (deps: Record<string, unknown> | undefined): void => {
      for (const [name, node] of Object.entries(deps ?? {})) {
        const { version, dependencies } = node as {
          version?: string;
          dependencies?: Record<string, unknown>;
        };
        if (version !== undefined) {
          names.add(name);
        }
        walk(dependencies);
      }
    };
    walk(tree.dependencies);
    assert.ok(names.has("@perps/token-client") && names.has("@noble/ed25519"), [...names].join());
    for (const name of [
      "ioredis",
      "pino",
      "prom-client",
      "tsx",
      "sodium-native",
      "@connectrpc/connect-node",
      "@bufbuild/protovalidate",
      "typescript",
    ]) {
      assert.equal(names.has(name), false, `${name} is installed`);
      assert.equal(existsSync(join(consumer, "node_modules", name)), false, `${name} is on disk`);
    }
    assert.deepEqual([...names].sort(), [
      "@bufbuild/protobuf",
      "@connectrpc/connect",
      "@connectrpc/connect-web",
      "@noble/ed25519",
      "@perps/token-client",
    ]);
  });

  it('transport "grpc" without its optional peer @connectrpc/connect-node: a rejection that says what to install', async () => {
    writeFileSync(
      join(consumer, "no-grpc.mjs"),
      `import { createTokenClient } from "@perps/token-client";
const client = createTokenClient({ baseUrl: process.env.BASE_URL, transport: "grpc" });
await client.listTokens("pt_x").then(() => console.log("resolved"), (err) => console.log(err.message));
client.close();
`,
    );
    const { stdout } = await run(process.execPath, ["no-grpc.mjs"], {
      cwd: consumer,
      env: { ...npmEnvironment(), BASE_URL: service.publicUrl },
    });
    assert.match(
      stdout,
      /transport "grpc" needs the package @connectrpc\/connect-node \(an optional peer dependency\): npm install @connectrpc\/connect-node@2/,
    );
    // The CLI says the same, as an answer rather than an "unexpected error", exit 1.
    const cli = await run(
      process.execPath,
      [
        join(consumer, "node_modules/@perps/token-client/dist/cli/perps-tokens.js"),
        "list",
        "--transport",
        "grpc",
        "--url",
        service.publicUrl,
        "--token",
        "pt_x",
      ],
      { cwd: consumer, env: npmEnvironment() },
    ).then(
      () => assert.fail("the CLI succeeded without @connectrpc/connect-node"),
      (err: { code?: number; stderr?: string }) => err,
    );
    assert.equal(cli.code, 1);
    assert.equal(
      cli.stderr,
      'perps-tokens: transport "grpc" needs the package @connectrpc/connect-node (an optional peer dependency): npm install @connectrpc/connect-node@2\n',
    );
    // The Node consumers below use gRPC too: install the peer, as such a user would.
    addLockedDependency(consumer, "@connectrpc/connect-node");
  });

  /** Runs a consumer script with node in the consumer project and parses what it printed. */
  async function runNodeConsumer(name: string, flags: string[] = []): Promise<NodeOutcome> {
    const { stdout } = await run(process.execPath, [...flags, name], {
      cwd: consumer,
      env: {
        ...npmEnvironment(),
        BASE_URL: service.publicUrl,
        USER_ID: userId,
        KEY_FILE: keyFile(),
        NAME: name.replace(/\W/g, "-"),
      },
    });
    return JSON.parse(stdout) as NodeOutcome;
  }

  function assertNodeOutcome(outcome: NodeOutcome, name: string): void {
    assert.equal(outcome.sameErrorClass, true, "'.' and './node' share TokenApiError");
    assert.deepEqual(Object.keys(outcome.transports), ["rest", "grpc"]);
    for (const [transport, result] of Object.entries(outcome.transports)) {
      assert.equal(result.wellFormed, true);
      assert.deepEqual(
        result.listed.filter((t) => t.id === result.id).map((t) => t.name),
        [`${name.replace(/\W/g, "-")}-${transport}`],
      );
      assert.deepEqual(result.refusal, {
        isTokenApiError: true,
        code: Code.NotFound,
        ...(transport === "rest" ? { httpStatus: 404 } : {}),
      });
    }
  }

  /** The service has the token: deleting it by id succeeds (a second time it would be NOT_FOUND). */
  async function assertStored(ids: string[]): Promise<void> {
    const client = createTokenClient({
      baseUrl: service.publicUrl,
      signer: signerFromPem(readFileSync(keyFile())),
    });
    try {
      for (const tokenId of ids) {
        await client.deleteToken({ userId, tokenId });
      }
    } finally {
      client.close();
    }
  }

  it("ESM: import, sign with the openssl PEM, create over REST and gRPC, list, typed refusal", async () => {
    writeFileSync(join(consumer, "consumer.mjs"), ESM_CONSUMER);
    const outcome = await runNodeConsumer("consumer.mjs");
    assertNodeOutcome(outcome, "consumer.mjs");
    await assertStored(Object.values(outcome.transports).map((t) => t.id));
  });

  it("CommonJS: require works without require(esm) (as on Node < 20.19)", async () => {
    writeFileSync(join(consumer, "consumer.cjs"), CJS_CONSUMER);
    // This Node could require() ES modules; switched off, an ESM-only dependency would throw.
    const flags = process.allowedNodeEnvironmentFlags.has("--no-experimental-require-module")
      ? ["--no-experimental-require-module"]
      : [];
    const outcome = await runNodeConsumer("consumer.cjs", flags);
    assertNodeOutcome(outcome, "consumer.cjs");
    await assertStored(Object.values(outcome.transports).map((t) => t.id));
  });

  it("browser: a bundle for platform browser has no Node.js module and runs with page globals only", async () => {
    writeFileSync(join(consumer, "page.mjs"), BROWSER_CONSUMER);
    const result = await esbuild.build({
      absWorkingDir: consumer,
      entryPoints: ["page.mjs"],
      outfile: "page.bundle.js",
      bundle: true,
      platform: "browser",
      format: "iife",
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.keys(result.metafile.inputs);
    assert.ok(
      inputs.includes("node_modules/@perps/token-client/dist/sdk/index.js"),
      "bundled from the installed package's ESM build",
    );
    assert.deepEqual(
      inputs.filter((input) =>
        /^node:|connect-node|\/dist\/cjs\/|node_modules\/(ioredis|pino)/.test(input),
      ),
      [],
    );
    const bundle = readFileSync(join(consumer, "page.bundle.js"), "utf8");
    // esbuild's stand-in for a require() it could not bundle: none was left.
    assert.doesNotMatch(bundle, /__require/);
    await assertBrowserOutcome([bundle], "browser-");
  });

  it("browser build: the shipped classic script runs with page globals only, the shipped ES module needs no node_modules", async () => {
    const installed = join(consumer, "node_modules/@perps/token-client");
    const global = readFileSync(join(installed, "dist/browser/index.global.js"), "utf8");
    await assertBrowserOutcome([global, GLOBAL_CONSUMER], "global-");
    // The ES module alone in a folder (as on a static host): it imports nothing.
    const alone = join(dir, "static");
    mkdirSync(alone);
    copyFileSync(join(installed, "dist/browser/index.js"), join(alone, "sdk.js"));
    const sdk = (await import(pathToFileURL(join(alone, "sdk.js")).href)) as {
      createTokenClient: typeof createTokenClient;
    };
    const client = sdk.createTokenClient({ baseUrl: service.publicUrl });
    await assert.rejects(client.listTokens("pt_x"), { code: Code.Unauthenticated });
    client.close();
  });

  /** Runs `scripts` in one context with page globals, then its runConsumer, and checks what it made. */
  async function assertBrowserOutcome(scripts: string[], prefix: string): Promise<void> {
    const context = vm.createContext(pageGlobals());
    for (const script of scripts) {
      vm.runInContext(script, context);
    }
    const runConsumer = context.runConsumer as (input: object) => Promise<string>;
    const outcome = JSON.parse(
      await runConsumer({
        baseUrl: service.publicUrl,
        userId,
        pem: readFileSync(keyFile(), "utf8"),
        prefix,
      }),
    ) as BrowserOutcome;
    assert.deepEqual(outcome.globals, ["undefined", "undefined"]);
    for (const transport of ["rest", "connect"] as const) {
      assert.deepEqual(
        outcome[transport].listed.filter((t) => t.id === outcome[transport].id).map((t) => t.name),
        [`${prefix}${transport}`],
      );
    }
    assert.match(outcome.grpc, /transport "grpc" needs HTTP\/2 and works in Node\.js only/);
    await assertStored([outcome.rest.id, outcome.connect.id]);
  }

  it("TypeScript: the shipped declarations type-check an ESM and a CommonJS consumer", async () => {
    writeFileSync(join(consumer, "typed.mts"), TYPED_ESM);
    writeFileSync(join(consumer, "typed.cts"), TYPED_CJS);
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          lib: ["es2022", "dom"],
          // The ./node entry speaks of Buffer: a Node project has @types/node.
          typeRoots: [join(ROOT, "node_modules/@types")],
          types: ["node"],
          noEmit: true,
        },
        files: ["typed.mts", "typed.cts"],
      }),
    );
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const { stdout } = await run(process.execPath, [tsc, "-p", ".", "--explainFiles"], {
      cwd: consumer,
    }).catch((err: { stdout?: string }) => {
      assert.fail(`tsc found errors:\n${err.stdout ?? String(err)}`);
    });
    // Each consumer got the declarations of its own module system.
    for (const file of [
      "dist/sdk/index.d.ts",
      "dist/cjs/sdk/index.d.ts",
      "dist/cjs/sdk/node.d.ts",
    ]) {
      assert.ok(stdout.includes(`node_modules/@perps/token-client/${file}`), `${file} not used`);
    }
  });
});
