import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createPublicKey } from "node:crypto";
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
import { UserKeyService } from "../src/gen/perps/token/v1/user_key_pb.js";
import { Code, createTokenClient, signerFromPem } from "../src/sdk/index.js";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/** What a Node consumer script prints: per transport, what it made and saw. */
interface NodeOutcome {
  sameErrorClass: boolean;
  transports: Record<
    string,
    {
      id: string;
      wellFormed: boolean;
      listed: { id: string; name: string; expiresAt: string }[];
      refusal: { isTokenApiError: boolean; code: number; httpStatus?: number };
    }
  >;
}

// The body both Node consumers share; ESM and CJS differ only in how they load the SDK.
const NODE_BODY = `
  const { BASE_URL, USER_ID, KEY_FILE, NAME } = process.env;
  const signer = signerFromPem(readFileSync(KEY_FILE));
  const transports = {};
  for (const transport of ["rest", "grpc"]) {
    const client = createTokenClient({ baseUrl: BASE_URL, transport, signer });
    try {
      const created = await client.createToken({
        userId: USER_ID,
        name: NAME + "-" + transport,
        expiresIn: 3600,
      });
      const listed = await client.listTokens(created.token);
      let refusal;
      try {
        await client.deleteToken({ userId: USER_ID, tokenId: "AAAAAAAAAAAAAAAA" });
      } catch (err) {
        refusal = { isTokenApiError: err instanceof TokenApiError, code: err.code, httpStatus: err.httpStatus };
      }
      transports[transport] = { id: created.id, wellFormed: isWellFormedToken(created.token), listed, refusal };
    } finally {
      client.close();
    }
  }
  console.log(JSON.stringify({ sameErrorClass: TokenApiError === NodeTokenApiError, transports }));
`;

const ESM_CONSUMER = `import { readFileSync } from "node:fs";
import { createTokenClient, signerFromPem, TokenApiError } from "@perps/token-client";
import { isWellFormedToken, TokenApiError as NodeTokenApiError } from "@perps/token-client/node";
${NODE_BODY}`;

const CJS_CONSUMER = `"use strict";
const { readFileSync } = require("node:fs");
const { createTokenClient, signerFromPem, TokenApiError } = require("@perps/token-client");
const { isWellFormedToken, TokenApiError: NodeTokenApiError } = require("@perps/token-client/node");
async function main() {
${NODE_BODY}
}
main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
`;

// Run in a page: what it returns is JSON text, as objects of the page's realm
// would not compare equal to this one's. `createTokenClient` and
// `signerFromPem` come from the SDK however the page loaded it.
const BROWSER_BODY = `async ({ baseUrl, userId, pem, prefix }) => {
  const signer = signerFromPem(pem);
  const out = { globals: [typeof process, typeof Buffer] };
  for (const transport of ["rest", "connect"]) {
    const client = createTokenClient({ baseUrl, transport, signer });
    const created = await client.createToken({ userId, name: prefix + transport, expiresIn: 3600 });
    out[transport] = { id: created.id, listed: await client.listTokens(created.token) };
    client.close();
  }
  const grpc = createTokenClient({ baseUrl, transport: "grpc", signer });
  out.grpc = await grpc.createToken({ userId, name: prefix + "grpc" }).then(() => "created", (err) => err.message);
  return JSON.stringify(out);
}`;

/** A page's script bundled by the page's own bundler from the installed package. */
const BROWSER_CONSUMER = `import { createTokenClient, signerFromPem } from "@perps/token-client";
globalThis.runConsumer = ${BROWSER_BODY};
`;

/** A page with the shipped classic-script build: the SDK is the global PerpsTokenClient. */
const GLOBAL_CONSUMER = `const { createTokenClient, signerFromPem } = PerpsTokenClient;
globalThis.runConsumer = ${BROWSER_BODY};
`;

/** What a page offers a script: no process, no Buffer, no require. */
function pageGlobals(): Record<string, unknown> {
  return {
    fetch,
    Headers,
    Request,
    Response,
    AbortController,
    AbortSignal,
    DOMException,
    TextEncoder,
    TextDecoder,
    URL,
    URLSearchParams,
    crypto: globalThis.crypto,
    atob,
    btoa,
    setTimeout,
    clearTimeout,
    queueMicrotask,
    console,
  };
}

type BrowserOutcome = {
  globals: string[];
  grpc: string;
} & Record<"rest" | "connect", { id: string; listed: { id: string; name: string }[] }>;

const TYPED_ESM = `import {
  Code,
  type CreatedToken,
  createTokenClient,
  signerFromPem,
  TokenApiError,
  type TokenClient,
  type TokenSummary,
} from "@perps/token-client";
import { createIntrospectionClient, isWellFormedToken } from "@perps/token-client/node";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";

export const tokenService: string = TokenService.typeName;
declare const pem: string;
const client: TokenClient = createTokenClient({
  baseUrl: "http://127.0.0.1:1",
  transport: "rest",
  signer: signerFromPem(pem),
});
export async function create(): Promise<string> {
  const created: CreatedToken = await client.createToken({ userId: "u", name: "n", expiresIn: 3600 });
  const listed: TokenSummary[] = await client.listTokens(created.token);
  return isWellFormedToken(created.token) ? (listed[0]?.id ?? "") : "";
}
export function isNotFound(err: unknown): boolean {
  return err instanceof TokenApiError && err.code === Code.NotFound;
}
export const introspection = createIntrospectionClient({ baseUrl: "http://127.0.0.1:1" });
// @ts-expect-error -- the transport is "rest", "connect" or "grpc"
createTokenClient({ baseUrl: "http://127.0.0.1:1", transport: "carrier-pigeon" });
// @ts-expect-error -- the key file's text or bytes, not a number
signerFromPem(42);
`;

const TYPED_CJS = `import { createTokenClient, signerFromPem, type TokenClient } from "@perps/token-client";
import { isWellFormedToken } from "@perps/token-client/node";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";

export const tokenService: string = TokenService.typeName;
export const client: TokenClient = createTokenClient({
  baseUrl: "http://127.0.0.1:1",
  signer: signerFromPem(new Uint8Array()),
});
export const wellFormed: boolean = isWellFormedToken("pt_x");
// @ts-expect-error -- createToken needs the userId
void client.createToken({});
`;

/** The key file openssl writes, and the public key to register, as 64 hex. */
async function opensslKey(path: string): Promise<string> {
  await run("openssl", ["genpkey", "-algorithm", "ed25519", "-out", path]);
  const x = createPublicKey(readFileSync(path)).export({ format: "jwk" }).x;
  return Buffer.from(x ?? "", "base64url").toString("hex");
}

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
      "dist/gen/perps/token/v1/token_pb.js",
      "dist/gen/perps/token/v1/token_pb.d.ts",
      "dist/cjs/gen/perps/token/v1/token_pb.js",
      "dist/cjs/gen/perps/token/v1/token_pb.d.ts",
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

  it("the contract's generated code: import and require of one module per proto file", async () => {
    const contract = "@perps/token-client/contract/perps/token/v1/token_pb.js";
    writeFileSync(
      join(consumer, "contract.mjs"),
      `import { TokenService } from "${contract}";\nconsole.log(TokenService.typeName);\n`,
    );
    writeFileSync(
      join(consumer, "contract.cjs"),
      `const { TokenService } = require("${contract}");\nconsole.log(TokenService.typeName);\n`,
    );
    for (const file of ["contract.mjs", "contract.cjs"]) {
      const { stdout } = await run(process.execPath, [file], { cwd: consumer });
      assert.equal(stdout.trim(), "perps.token.v1.TokenService", file);
    }
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
      "dist/gen/perps/token/v1/token_pb.d.ts",
      "dist/cjs/gen/perps/token/v1/token_pb.d.ts",
    ]) {
      assert.ok(stdout.includes(`node_modules/@perps/token-client/${file}`), `${file} not used`);
    }
  });
});
