import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { runNpm } from "../support/packed-package.js";
import { copyInto, repositoryFiles } from "../support/repository-copy.js";

const run = promisify(execFile);

// Issue 21: nothing in node_modules is edited, so an install that runs no
// script at all (`npm ci --ignore-scripts`, as container builds do), then
// the build, answers malformed protobuf exactly as `npm ci` does. A temp
// checkout of the repository's files, installed from this machine's npm
// cache (`--offline`: the repository's `npm ci` filled it), runs the tests
// of malformed messages on every protocol there.

/** The tests of malformed protobuf, run in the fresh install. */
const MALFORMED_TESTS = [
  "test/unit/server/wire/wire-parity.test.ts",
  "test/integration/refusal-telemetry.test.ts",
];

/**
 * This process's environment without the test runner's mark: with it, a
 * nested `node --test` would report to this runner instead of printing.
 */
function standaloneEnv(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  return env;
}

describe("npm ci --ignore-scripts, then the build: malformed protobuf is still INVALID_ARGUMENT", () => {
  let dir: string;

  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "perps-ignore-scripts-")));
    copyInto(dir, repositoryFiles());
    runNpm(["ci", "--ignore-scripts", "--offline"], dir);
    runNpm(["run", "build"], dir);
  });
  after(() => {
    if (dir !== undefined) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves @connectrpc/connect as published: it still says INTERNAL for a malformed message", () => {
    const serialization = readFileSync(
      join(dir, "node_modules/@connectrpc/connect/dist/esm/protocol/serialization.js"),
      "utf8",
    );
    assert.match(serialization, /parse binary: \$\{m\}`, Code\.Internal\)/);
  });

  it("passes the malformed-protobuf tests of every protocol there", async () => {
    const { stdout } = await run(
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
      { cwd: dir, env: standaloneEnv(), maxBuffer: 16 * 1024 * 1024 },
    ).catch((err: { stdout?: string }) =>
      assert.fail(`the tests failed:\n${err.stdout ?? String(err)}`),
    );
    assert.match(stdout, /^ℹ fail 0$/m);
    const passed = Number(/^ℹ pass (\d+)$/m.exec(stdout)?.[1]);
    assert.ok(passed > 100, `${passed} tests passed`);
    assert.match(stdout, /a malformed message: INVALID_ARGUMENT, where Connect says INTERNAL/);
    assert.match(stdout, /gRPC: a malformed message is INVALID_ARGUMENT/);
  });
});
