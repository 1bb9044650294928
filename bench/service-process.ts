import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePorts } from "../src/process/ports.js";
import { pidsWhere } from "../test/support/process-table.js";
import { writeBenchCredentials } from "./bench-users.js";

const ROOT = join(import.meta.dirname, "..");

export interface ServiceProcess {
  readonly pid: number;
  readonly publicPort: number;
  readonly internalPort: number;
  /** Resident set size of the service process, from /proc (bytes). */
  rssBytes(): number;
  /** CPU time the service process has used so far (user + system), in seconds. */
  cpuSeconds(): number;
  /** CPU time of its main thread (the event loop) so far, in seconds. */
  mainThreadCpuSeconds(): number;
  stop(): Promise<void>;
}

export interface ServiceProcessOptions {
  redisUrl: string;
  /** Extra node flags, e.g. ["--cpu-prof", "--cpu-prof-dir=..."]. */
  nodeFlags?: string[];
  /** Pin the service to these CPUs (taskset list, e.g. "1"); undefined leaves it to the OS. */
  cpus?: string;
  env?: Record<string, string>;
  /** Entry script, run through tsx. Default: the compiled service, dist/main.js. */
  main?: string;
  /** Arguments of the entry script (after `main`). */
  args?: string[];
  /** The ports to listen on (several processes sharing them with SO_REUSEPORT). Default: free ones. */
  ports?: { publicPort: number; internalPort: number };
}

// Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on Linux).
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;

/**
 * User + system CPU time of a process in seconds (Linux); with `tid`, of that
 * one thread (the main thread's tid is the pid).
 */
export function cpuSecondsOf(pid: number, tid?: number): number {
  const stat = readFileSync(
    tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`,
    "utf8",
  );
  // Fields after the command name (in parentheses, which may hold spaces):
  // utime and stime are the 12th and 13th of them.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * A process and its children (the service's workers under node:cluster), by
 * their parent pid in /proc; the bench's service runs no embedded Redis.
 */
export function processTree(pid: number): number[] {
  const children = pidsWhere((child) => {
    const stat = readFileSync(`/proc/${child}/stat`, "utf8");
    // The parent pid is the second field after the command name.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
  });
  return [pid, ...children];
}

const sumOver = (pids: readonly number[], of: (pid: number) => number): number =>
  pids.reduce((sum, p) => {
    try {
      return sum + of(p);
    } catch {
      return sum;
    }
  }, 0);

/** VmRSS of a process in bytes (Linux). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return match?.[1] === undefined ? 0 : Number(match[1]) * 1024;
}

/**
 * Runs the service as `npm start` does (the compiled dist/main.js, rebuilt
 * first if src/ changed; at its defaults, so one worker per core, each on
 * its own SO_REUSEPORT socket where the runtime has it), as a child process
 * so that its CPU, RSS and profile are its own (summed over the primary and
 * its workers); another `main` (the bench's own floor servers) runs through
 * tsx as one process. Ports are free ones chosen here (port 0 would make
 * workers share the primary's socket instead).
 */
export async function startServiceProcess(opts: ServiceProcessOptions): Promise<ServiceProcess> {
  if (opts.main === undefined) {
    execFileSync(process.execPath, [join(ROOT, "scripts/build.mjs"), "--if-stale"], {
      stdio: "inherit",
    });
  }
  const nodeArgs = [
    ...(opts.nodeFlags ?? []),
    ...(opts.main === undefined ? [join(ROOT, "dist/main.js")] : ["--import", "tsx", opts.main]),
    ...(opts.args ?? []),
  ];
  const [command, args] =
    opts.cpus === undefined
      ? [process.execPath, nodeArgs]
      : ["taskset", ["-c", opts.cpus, process.execPath, ...nodeArgs]];
  // Logs (one line per request) go to a file: pino writes stdout
  // synchronously, and a pipe the busy load generator drains late would
  // block the service and distort the figures.
  const [publicPort, internalPort] =
    opts.ports === undefined
      ? await freePorts(2)
      : [opts.ports.publicPort, opts.ports.internalPort];
  const logDir = mkdtempSync(join(tmpdir(), "perps-bench-log-"));
  const logFile = join(logDir, "service.log");
  const logFd = openSync(logFile, "w");
  const child = spawn(command, args, {
    stdio: ["ignore", logFd, "inherit"],
    env: {
      ...process.env,
      PUBLIC_PORT: String(publicPort),
      INTERNAL_PORT: String(internalPort),
      REDIS_URL: opts.redisUrl,
      ADMIN_CREDENTIALS_FILE: writeBenchCredentials(logDir),
      TOKEN_RATE_LIMIT_PER_MINUTE: "1000000",
      TOKEN_MAX_ACTIVE_PER_USER: "1000000",
      // The per-request log line at its default level, whatever the caller's environment says.
      LOG_LEVEL: "info",
      ...opts.env,
    },
  });
  closeSync(logFd);
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code) => {
      exitCode = code;
      resolve();
    }),
  );
  const ports = await listeningPorts(logFile, () => exitCode);
  const pid = child.pid;
  if (pid === undefined) {
    throw new Error("service process has no pid");
  }
  return {
    pid,
    ...ports,
    rssBytes: () => sumOver(processTree(pid), rssOf),
    cpuSeconds: () => sumOver(processTree(pid), (p) => cpuSecondsOf(p)),
    mainThreadCpuSeconds: () => sumOver(processTree(pid), (p) => cpuSecondsOf(p, p)),
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}

/** Polls the log file for the JSON "listening" line. */
async function listeningPorts(
  logFile: string,
  exitCode: () => number | null | undefined,
): Promise<{ publicPort: number; internalPort: number }> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const code = exitCode();
    if (code !== undefined) {
      throw new Error(`service exited with ${code} before listening`);
    }
    for (const line of readFileSync(logFile, "utf8").split("\n")) {
      if (!line.includes('"listening"')) {
        continue;
      }
      const { publicPort, internalPort } = JSON.parse(line) as {
        publicPort?: unknown;
        internalPort?: unknown;
      };
      if (typeof publicPort === "number" && typeof internalPort === "number") {
        return { publicPort, internalPort };
      }
    }
    await sleep(50);
  }
  throw new Error("service did not start in 20 s");
}
