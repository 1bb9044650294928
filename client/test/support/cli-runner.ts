import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before } from "node:test";
import { buildIfStale } from "../../../test/support/build.js";
import { lateValue } from "../../../test/support/late-value.js";
import { TEST_OPERATOR } from "../../../test/support/test-operator.js";
import { startTestRedis, type TestRedis } from "../../../test/support/test-redis.js";
import { startTestService, type TestService } from "../../../test/support/test-service.js";

// Runs of the perps-tokens bin against a test service (cli*.test.ts).

export const ROOT = resolve(import.meta.dirname, "../../..");
export const COMMANDS = [
  "keygen",
  "register-key",
  "delete-key",
  "create",
  "delete",
  "list",
  "introspect",
  "list-keys",
  "revoke-tokens",
];

/** The bin exactly as package.json declares it, so the test runs what `npm ci` installs. */
export function binPath(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, "client/package.json"), "utf8")) as {
    bin?: Record<string, string>;
  };
  const bin = pkg.bin?.["perps-tokens"];
  assert.equal(typeof bin, "string", 'package.json has no bin "perps-tokens"');
  return join(ROOT, "client", bin ?? "");
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The folder each run starts in, made by cliSuite. */
export let cwd: string;
let baseEnv: Record<string, string | undefined>;

// Each run is a Node process (~0.2 s of CPU): a few at a time keeps two cores
// busy without starving the service under test.
const MAX_RUNNING = 4;
let running = 0;
const waiting: (() => void)[] = [];

async function slot(): Promise<() => void> {
  while (running >= MAX_RUNNING) {
    await new Promise<void>((wake) => waiting.push(wake));
  }
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

/** Runs `node <bin> ...args` in a temp folder; resolves when it exits (it must, within 30 s). */
export async function run(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const release = await slot();
  try {
    return await new Promise((resolveRun, reject) => {
      const child = spawn(process.execPath, [binPath(), ...args], {
        cwd,
        env: { ...baseEnv, ...env },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 30_000,
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on("error", reject);
      child.on("close", (code) => resolveRun({ code, stdout, stderr }));
    });
  } finally {
    release();
  }
}

export function json(text: string): Record<string, unknown> {
  const lines = text.trim().split("\n");
  assert.equal(lines.length, 1, `one JSON line expected: ${text}`);
  return JSON.parse(lines[0] ?? "") as Record<string, unknown>;
}

/** The raw public key (64 hex) of a PEM private key file, computed independently of the CLI. */
export function publicKeyOfFile(path: string): string {
  const jwk = createPublicKey(createPrivateKey(readFileSync(path, "utf8"))).export({
    format: "jwk",
  });
  return Buffer.from(jwk.x ?? "", "base64url").toString("hex");
}

/**
 * The service the bin talks to and the folder and environment it runs in, for
 * the tests of the calling describe.
 */
export function cliSuite() {
  const [redis, setRedis] = lateValue<TestRedis>("redis");
  const [service, setService] = lateValue<TestService>("service");

  before(async () => {
    buildIfStale();
    setRedis(await startTestRedis());
    setService(await startTestService({ redisUrl: redis.url }));
    cwd = mkdtempSync(join(tmpdir(), "perps-cli-"));
    baseEnv = { ...process.env };
    // The child is a plain `node <bin>`, not a test: nothing of this runner's set-up leaks in.
    delete baseEnv.NODE_OPTIONS;
    delete baseEnv.NODE_TEST_CONTEXT;
    delete baseEnv.PERPS_TOKEN;
    baseEnv.PERPS_TOKENS_URL = service.publicUrl;
    baseEnv.PERPS_TOKENS_INTERNAL_URL = service.internalUrl;
    baseEnv.PERPS_TOKENS_OPERATOR_SECRET = TEST_OPERATOR.secret;
  });
  after(async () => {
    rmSync(cwd, { recursive: true, force: true });
    await service.stop();
    await redis.dispose();
  });
  return { redis, service };
}
