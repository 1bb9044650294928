import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { signedIn, signIn } from "../support/console-sign-in.js";
import {
  documentedFiles,
  type MarkdownBlock,
  markdownBlocks,
  REPO_ROOT,
} from "../support/markdown-blocks.js";
import { outputShape } from "../support/output-shape.js";
import { ShellSession } from "../support/shell-session.js";
import { launchBrowser } from "../support/test-browser.js";
import { TEST_OPERATOR } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Every example of README.md, docs/*.md and client/README.md, run as printed against a real
// service (one Redis, one service, shared by all files), as connect-es runs
// its README's snippets. Each file is one reader's terminal: its ```sh blocks
// run in order in one bash, so variables and the working directory carry over.
// A ```text block right after a ```sh or ```ts block is what that block
// prints, compared by shape (tokens, ids, dates and keys vary from run to
// run). The ```nginx and ```caddyfile blocks (docs/api.md)
// are run in a real nginx and caddy by forward-auth-proxies.test.ts.
// Any other block fails here until it is marked ```text or taught to this test.

const SCRIPT_TIMEOUT_MS = 60_000;

// The examples run in a bash opened in this repository. Commands that install
// or start the whole project are documented as ```text and never run here:
// `npm ci` would replace the node_modules that worktrees share, `npm start`
// never ends. This is a guard against such a block marked ```sh by mistake.
const NEVER_RUN = /\bnpm\s+(ci|install|i|start|test|run)\b|\bnpx\s+--yes\b/;

/**
 * The repository's folder as a reader has it after `npm start`: every entry
 * of this checkout (linked, so the build and node_modules are this one's),
 * and the `.data/redis/operator-secret` the service's first start writes,
 * holding the test operator's secret. The examples read it as printed, so a
 * block that needs the secret and does not read it fails here as in a fresh
 * shell.
 */
function readerCheckout(dir: string): string {
  const checkout = join(dir, "checkout");
  mkdirSync(checkout);
  for (const entry of readdirSync(REPO_ROOT)) {
    if (entry !== ".data") {
      symlinkSync(join(REPO_ROOT, entry), join(checkout, entry));
    }
  }
  mkdirSync(join(checkout, ".data", "redis"), { recursive: true, mode: 0o700 });
  writeFileSync(join(checkout, ".data", "redis", "operator-secret"), `${TEST_OPERATOR.secret}\n`, {
    mode: 0o600,
  });
  return checkout;
}

/** A block to run, with the output the documentation shows for it. */
interface Example {
  readonly block: MarkdownBlock;
  /** The ```text block that follows it; none means it prints nothing. */
  readonly expected: string;
}

type Step =
  | { kind: "run"; example: Example }
  | { kind: "proxy"; block: MarkdownBlock }
  | { kind: "unknown"; block: MarkdownBlock };

const RUNNABLE = new Set(["sh", "ts"]);

/** The one file that may hold a proxy recipe of each kind: forward-auth-proxies.test.ts runs it from there. */
const PROXY_RECIPES: Record<string, string> = { nginx: "docs/api.md", caddyfile: "docs/api.md" };

function stepsOf(file: string): Step[] {
  const blocks = markdownBlocks(file);
  const steps: Step[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (block === undefined || block.lang === "text") {
      continue;
    }
    if (block.lang in PROXY_RECIPES) {
      steps.push({ kind: "proxy", block });
      continue;
    }
    if (!RUNNABLE.has(block.lang)) {
      steps.push({ kind: "unknown", block });
      continue;
    }
    const next = blocks[i + 1];
    const output = next?.lang === "text" && next.followsPrevious ? next : undefined;
    steps.push({ kind: "run", example: { block, expected: output?.text ?? "" } });
  }
  return steps;
}

const where = (block: MarkdownBlock) => `${block.file}:${block.line}`;

function firstLine(block: MarkdownBlock): string {
  return block.text.split("\n").find((line) => line.trim() !== "") ?? "";
}

function assertOutput(example: Example, output: string): void {
  const want = outputShape(example.expected);
  const got = outputShape(output);
  if (want !== got) {
    assert.fail(
      `${where(example.block)}: the output differs from the documentation's.\n` +
        `--- documented (shape)\n${want}\n--- printed (shape)\n${got}\n--- printed\n${output}`,
    );
  }
}

/**
 * A ```sh block marked so prints the path of a key file: the reader then signs in to the token
 * console with it as the user `$USER_ID` of the block's shell, and so does this test, in Chromium.
 */
const CONSOLE_SIGN_IN = "console-sign-in";

async function consoleSignIn(
  session: ShellSession,
  publicUrl: string,
  keyPath: string,
): Promise<void> {
  const userId = (await session.run('printf "%s" "$USER_ID"', SCRIPT_TIMEOUT_MS)).output;
  assert.ok(existsSync(keyPath), `no key file at ${keyPath}`);
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(`${publicUrl}/`);
    await signIn(page, userId, keyPath);
    await signedIn(page);
    // Signing out deletes the page's session token: the next files' user starts with none.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("Signed out: the session token is deleted").waitFor();
  } finally {
    await browser.close();
  }
}

interface RunResult {
  code: number | null;
  output: string;
}

function runProcess(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: SCRIPT_TIMEOUT_MS,
    });
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/**
 * A reader's own project in `dir`, as after `npm init -y` and
 * `npm install <this repository>/client tsx`, as the doc says: package.json without
 * "type" (so no top-level await), node_modules/@perps/token-client pointing
 * at the client package and node_modules/tsx at the tsx this repository uses
 * (a test must not need the registry).
 */
function readerProject(dir: string): void {
  if (!existsSync(join(dir, "package.json"))) {
    writeFileSync(
      join(dir, "package.json"),
      `${JSON.stringify({ name: "sdk-demo", version: "1.0.0" }, null, 2)}\n`,
    );
  }
  const link = join(dir, "node_modules", "@perps", "token-client");
  if (!existsSync(link)) {
    mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
    mkdirSync(join(dir, "node_modules", "@perps"), { recursive: true });
    symlinkSync(join(REPO_ROOT, "client"), link, "dir");
    symlinkSync(join(REPO_ROOT, "node_modules", "tsx"), join(dir, "node_modules", "tsx"), "dir");
    symlinkSync("../tsx/dist/cli.mjs", join(dir, "node_modules", ".bin", "tsx"));
  }
}

describe("the documentation's examples, run as printed", () => {
  let redis: TestRedis;
  let service: TestService;
  let root: string;
  let checkout: string;
  let env: Record<string, string>;
  const sessions: ShellSession[] = [];

  before(async () => {
    redis = await startTestRedis();
    // With its console, which the README's console section signs in to.
    service = await startTestService({ redis: redis.topology, console: true });
    root = mkdtempSync(join(tmpdir(), "perps-doc-examples-"));
    mkdirSync(join(root, "tmp"));
    checkout = readerCheckout(root);
    env = {
      // The reader's PATH, whatever python3 comes first on it (the Python example names its interpreter).
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? root,
      LANG: "C.UTF-8",
      // `mktemp -d` in the examples lands here, and goes with the test.
      TMPDIR: join(root, "tmp"),
      // The examples' defaults are 8080 and 9090; this test's service is on free ports.
      API: service.publicUrl,
      INTERNAL: service.internalUrl,
      // No OPERATOR_SECRET: a reader's fresh shell has none; the examples read the checkout's file.
    };
  });
  after(async () => {
    for (const session of sessions) {
      await session.close();
    }
    await service?.stop();
    await redis?.dispose();
    if (root !== undefined) {
      rmSync(root, { recursive: true, force: true });
    }
  });

  for (const file of documentedFiles()) {
    describe(file, () => {
      let session: ShellSession | undefined;
      let cwd = "";

      const shell = (): ShellSession => {
        if (session === undefined) {
          const scriptDir = mkdtempSync(join(root, "scripts-"));
          // A reader starts in the repository's folder, after `npm ci` and `npm start`.
          session = new ShellSession({ cwd: checkout, env, scriptDir });
          sessions.push(session);
        }
        return session;
      };

      for (const step of stepsOf(file)) {
        if (step.kind === "unknown") {
          it(`${where(step.block)}: a \`\`\`${step.block.lang} block`, () => {
            assert.fail(
              `${where(step.block)}: this test does not know how to run a \`\`\`${step.block.lang || "(no language)"} block; ` +
                "mark it ```text if it is not meant to run",
            );
          });
          continue;
        }
        if (step.kind === "proxy") {
          const { lang } = step.block;
          it(`${where(step.block)}: the ${lang} recipe (run in ${lang === "nginx" ? "nginx" : "caddy"} by forward-auth-proxies.test.ts)`, () => {
            const recipes = documentedFiles().flatMap((f) =>
              markdownBlocks(f).filter((b) => b.lang === lang),
            );
            // forward-auth-proxies.test.ts runs the one block of its file: a second one would go untested.
            assert.deepEqual(
              recipes.map(where),
              [where(step.block)],
              `exactly one ${lang} block, in ${PROXY_RECIPES[lang]}`,
            );
            assert.equal(step.block.file, PROXY_RECIPES[lang]);
          });
          continue;
        }
        const { example } = step;
        const { block } = example;
        if (block.lang === "ts") {
          it(`${where(block)}: ${block.meta || "a TypeScript program"}`, async () => {
            assert.match(
              block.meta,
              /^[\w.-]+\.ts$/,
              `${where(block)}: name the file: \`\`\`ts name.ts`,
            );
            // The reader's project is the session's temp folder, never this repository.
            assert.ok(
              cwd !== "" && cwd !== checkout,
              `${where(block)}: no \`cd "$(mktemp -d)"\` before it`,
            );
            readerProject(cwd);
            writeFileSync(join(cwd, block.meta), block.text);
            // `npx tsx <file>`: the tsx of the reader's project (node_modules/.bin).
            const tsx = join(cwd, "node_modules", ".bin", "tsx");
            const result = await runProcess(tsx, [block.meta], cwd, env);
            assert.equal(result.code, 0, `${where(block)} failed:\n${result.output}`);
            assertOutput(example, result.output);
          });
          continue;
        }
        it(`${where(block)}: ${firstLine(block)}`, async () => {
          assert.doesNotMatch(
            block.text,
            NEVER_RUN,
            `${where(block)}: installs or starts the project; mark it \`\`\`text`,
          );
          const result = await shell().run(block.text, SCRIPT_TIMEOUT_MS);
          cwd = result.cwd;
          assert.equal(
            result.status,
            0,
            `${where(block)}: its last command exited ${result.status}; it printed:\n${result.output}`,
          );
          assertOutput(example, result.output);
          if (block.meta === CONSOLE_SIGN_IN) {
            await consoleSignIn(shell(), service.publicUrl, result.output.trim());
          }
        });
      }
    });
  }
});
