// npm run lint:openapi: lints openapi.json with Redocly CLI (redocly.yaml) and
// Spectral (.spectral.yaml), side by side and offline. Their output is shown
// only when one of them fails: on Node 20 Redocly prints an end-of-life
// banner on every run, and no flag turns it off.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));

const linters = [
  // Fails on warnings too: redocly.yaml extends recommended-strict.
  { bin: "redocly", args: ["lint", "openapi.json"] },
  { bin: "spectral", args: ["lint", "--fail-severity=warn", "openapi.json"] },
];

// No usage data and no update check (which Redocly makes when run from a terminal).
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };

interface LintRun {
  bin: string;
  passed: boolean;
  output: string;
}

function lint(bin: string, args: readonly string[]): Promise<LintRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(`${root}node_modules/.bin/${bin}`, args, {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    // One buffer for both streams, so problems and summary keep their order.
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ bin, passed: code === 0, output: Buffer.concat(chunks).toString("utf8") }),
    );
  });
}

const runs = await Promise.all(linters.map(({ bin, args }) => lint(bin, args)));
const failed = runs.filter((run) => !run.passed);
for (const run of failed) {
  console.error(`${run.bin} lint openapi.json failed:\n${run.output}`);
}
if (failed.length > 0) {
  process.exit(1);
}
console.log(`openapi.json: ${runs.map((run) => run.bin).join(" and ")} find no problems`);
