// Start-up time of the service: from spawning the command to both listeners
// answering (GET /readyz on the public port and /healthz on the internal one
// return 200), with the embedded redis-server `npm start` runs when REDIS_URL
// is unset (a fresh data folder each run). The goal is under 2 s after the
// build, for `npm start` and for the `node dist/main.js` it execs, with
// WORKERS=1 on an idle machine (more workers than idle cores take longer:
// docs/running.md says how long); the TypeScript-at-start command of
// before is measured for comparison.
//
//   npx tsx bench/start-time.ts [--runs N] [--workers N] [--json]
//
// --workers sets WORKERS (default: the service's own, one per core).
//
// Exit code 1 when a compiled command's median misses the goal.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { median } from "./median.js";

const ROOT = resolve(import.meta.dirname, "..");
const GOAL_MS = 2000;
const POLL_MS = 5;
const GIVE_UP_MS = 30_000;

interface Command {
  name: string;
  argv: readonly string[];
  /** Held to the goal (the compiled service), or shown for comparison only. */
  goal: boolean;
}

const COMMANDS: readonly Command[] = [
  { name: "npm start", argv: ["npm", "start", "--silent"], goal: true },
  { name: "node dist/main.js", argv: [process.execPath, "dist/main.js"], goal: true },
  {
    name: "node --import tsx src/main.ts (before)",
    argv: [process.execPath, "--import", "tsx", "src/main.ts"],
    goal: false,
  },
];

/**
 * A free port below the ephemeral range: the service's embedded redis-server
 * takes an ephemeral one while it starts, and could be handed ours.
 */
async function unusedPort(taken: readonly number[] = []): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const free = await new Promise<boolean>((done) => {
      const server = createServer();
      server.once("error", () => done(false));
      server.listen(port, "127.0.0.1", () => server.close(() => done(true)));
    });
    if (free && !taken.includes(port)) {
      return port;
    }
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url);
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** One start: milliseconds from spawn until both listeners answer. */
async function startOnce(command: Command, workers: string | undefined): Promise<number> {
  const publicPort = await unusedPort();
  const internalPort = await unusedPort([publicPort]);
  const dir = mkdtempSync(join(tmpdir(), "perps-start-time-"));
  const [file, ...args] = command.argv;
  if (file === undefined) {
    throw new Error(`${command.name}: empty command`);
  }
  const started = performance.now();
  // Its own process group, so that npm, the service and its redis-server all stop.
  const child = spawn(file, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PUBLIC_PORT: String(publicPort),
      INTERNAL_PORT: String(internalPort),
      EMBEDDED_REDIS_DIR: join(dir, "redis"),
      LOG_LEVEL: "warn",
      ...(workers === undefined ? {} : { WORKERS: workers }),
    },
    stdio: ["ignore", "ignore", "inherit"],
    detached: true,
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  try {
    const ready = [
      `http://127.0.0.1:${publicPort}/readyz`,
      `http://127.0.0.1:${internalPort}/healthz`,
    ];
    const pending = new Set(ready);
    while (pending.size > 0) {
      if (child.exitCode !== null || performance.now() - started > GIVE_UP_MS) {
        throw new Error(`${command.name}: did not start (exit code ${child.exitCode})`);
      }
      for (const url of [...pending]) {
        if (await answers(url)) {
          pending.delete(url);
        }
      }
      if (pending.size > 0) {
        await sleep(POLL_MS);
      }
    }
    return performance.now() - started;
  } finally {
    if (child.pid !== undefined && child.exitCode === null) {
      process.kill(-child.pid, "SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "5" },
      workers: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error("--runs must be a positive integer");
  }
  // The goal is "after the build": bring dist/ up to date first, untimed.
  execFileSync(process.execPath, [join(ROOT, "scripts/build.mjs"), "--if-stale"], {
    stdio: "inherit",
  });
  const results = [];
  for (const command of COMMANDS) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      times.push(await startOnce(command, values.workers));
    }
    results.push({
      command: command.name,
      goalMs: command.goal ? GOAL_MS : null,
      medianMs: Math.round(median(times)),
      minMs: Math.round(Math.min(...times)),
      maxMs: Math.round(Math.max(...times)),
    });
  }
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify({ runs, results }, null, 2)}\n`);
  } else {
    const workers = values.workers === undefined ? "WORKERS default" : `WORKERS=${values.workers}`;
    process.stdout.write(
      `Start-up, spawn to both listeners answering (${runs} runs each, ${workers})\n\n`,
    );
    process.stdout.write(
      "| command | median ms | min ms | max ms | goal |\n|---|---|---|---|---|\n",
    );
    for (const r of results) {
      const goal =
        r.goalMs === null ? "—" : `< ${r.goalMs} ms: ${r.medianMs < r.goalMs ? "met" : "MISSED"}`;
      process.stdout.write(
        `| ${r.command} | ${r.medianMs} | ${r.minMs} | ${r.maxMs} | ${goal} |\n`,
      );
    }
  }
  if (results.some((r) => r.goalMs !== null && r.medianMs >= r.goalMs)) {
    process.exitCode = 1;
  }
}

await main();
