/**
 * Run by test/integration/worker-channel.test.ts: a primary (startWorkers)
 * whose workers each ask it for a shared port and exit, while it is busy,
 * before it replies, so that cluster's reply meets a closed channel.
 */
import cluster from "node:cluster";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { createLogger } from "../../src/log/logger.js";
import { startWorkers } from "../../src/process/workers.js";

const GIVE_UP = 3;
const count = Number(process.env.GONE_WORKERS ?? "4");

/** A process that has exited but is not reaped yet (the primary's loop is held). */
function isZombie(pid: number | undefined): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

if (cluster.isWorker) {
  // Port 0 goes through the primary (a round-robin handle), which replies
  // once it listens.
  createServer().listen(0);
  setImmediate(() => process.exit(GIVE_UP));
} else {
  const logger = createLogger({ level: "debug" });
  let exited = 0;
  const workers = startWorkers({
    count,
    logger,
    env: {},
    nodeFlags: [],
    giveUp: {
      exitCode: GIVE_UP,
      onGiveUp: (line) => {
        process.stdout.write(`gave up: ${line}\n`);
      },
    },
  });
  cluster.on("exit", () => {
    exited++;
    if (exited === count) {
      process.stdout.write(`all ${count} workers exited\n`);
      void workers.stop().then(() => logger.flush(() => process.exit(0)));
    }
  });
  // Hold the loop until every worker has asked and exited: the queries are
  // read, and answered, only afterwards.
  const pids = Object.values(cluster.workers ?? {}).map((worker) => worker?.process.pid);
  const deadline = Date.now() + 30_000;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (!pids.every(isZombie) && Date.now() < deadline) {
    Atomics.wait(pause, 0, 0, 20);
  }
  process.stdout.write(`held until ${pids.length} workers had exited\n`);
}
