import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { LINGER_MS } from "../../support/lingering-exit.js";
import { tempDirs } from "../../support/temp-dirs.js";

const LINGERING_EXIT = fileURLToPath(new URL("../../support/lingering-exit.ts", import.meta.url));

/** This environment for a runner of its own: not a child of ours (NODE_TEST_CONTEXT), a short wait. */
function runnerEnv(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _child, ...env } = process.env;
  return { ...env, TEST_LINGER_MS: "500" };
}

/** Runs `node --test` on one file that leaves a timer behind, with lingering-exit loaded. */
function runLingering(dir: string, body: string) {
  const file = join(dir, "lingering.test.mjs");
  writeFileSync(
    file,
    `import { it } from "node:test";\nimport assert from "node:assert/strict";\nit("leaves a timer", () => { setInterval(() => {}, 1000); ${body} });\nit("runs after it", () => {});\n`,
  );
  return spawnSync(
    process.execPath,
    ["--import", "tsx", "--import", LINGERING_EXIT, "--test", "--test-reporter=spec", file],
    { encoding: "utf8", timeout: 30_000, env: runnerEnv() },
  );
}

describe("lingering-exit (test/support/lingering-exit.ts)", () => {
  const dirs = tempDirs("perps-lingering-");
  after(() => dirs.removeAll());

  it("ends a test process a handle keeps alive, with every test counted and passed", () => {
    const run = runLingering(dirs.make(), "");
    assert.equal(run.signal, null, "ended by itself, not by the spawn's timeout");
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /ℹ tests 2\b/);
    assert.match(run.stdout, /ℹ pass 2\b/);
    assert.match(run.stderr + run.stdout, /still alive 500 ms after its tests/);
  });

  it("waits 10 s by default: longer than any after hook's own wait", () => {
    assert.equal(LINGER_MS, 10_000);
  });

  it("keeps a failure a failure", () => {
    const run = runLingering(dirs.make(), "assert.equal(1, 2);");
    assert.equal(run.signal, null);
    assert.equal(run.status, 1);
    assert.match(run.stdout, /ℹ fail 1\b/);
  });
});
