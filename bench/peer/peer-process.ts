import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePorts } from "../../src/process/ports.js";
import { type BenchRedis, startBenchRedis } from "../redis-server.js";
import { cpuSecondsOf, rssOf } from "../service-process.js";

/** Where the peer's build script lives, relative to the repository. */
export const PEER_DIR = resolve(import.meta.dirname, "../../../shared/peers/go-gateway");

/** The peer binary: `$PEER_BIN`, else the build script's output next to the repository. */
export function peerBinary(): string {
  const fromEnv = process.env.PEER_BIN;
  return fromEnv !== undefined && fromEnv !== "" ? resolve(fromEnv) : join(PEER_DIR, "bin/peer");
}

/** Whether the peer binary exists (the phase is skipped when not). */
export function peerBuilt(): boolean {
  return existsSync(peerBinary());
}

export interface PeerProcess {
  readonly pid: number;
  readonly httpPort: number;
  readonly grpcPort: number;
  /** The peer's own redis-server. */
  readonly redis: BenchRedis;
  rssBytes(): number;
  cpuSeconds(): number;
  /** CPU of its first thread: no event loop to tell apart in Go; kept for the common figures. */
  mainThreadCpuSeconds(): number;
  stop(): Promise<void>;
}

/** Waits for the peer's "peer listening" line on stderr (it logs nothing else when well). */
function listening(child: ChildProcess): Promise<void> {
  return new Promise((resolveListening, reject) => {
    let text = "";
    const timer = setTimeout(
      () => reject(new Error(`peer did not start in 20 s: ${text}`)),
      20_000,
    );
    child.stderr?.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      if (text.includes("peer listening")) {
        clearTimeout(timer);
        resolveListening();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`peer exited with ${code} before listening: ${text}`));
    });
  });
}

/**
 * Starts a redis-server of its own and the peer on it (ports from the free
 * port helper, bound to 127.0.0.1), as its README says: HTTP_PORT, GRPC_PORT,
 * REDIS_ADDR; its redigo pool and GOMAXPROCS at their defaults.
 */
export async function startPeerProcess(opts: { cpus?: string } = {}): Promise<PeerProcess> {
  const redis = await startBenchRedis();
  const [httpPort, grpcPort] = await freePorts(2);
  if (httpPort === undefined || grpcPort === undefined) {
    throw new Error("no free ports for the peer");
  }
  const binary = peerBinary();
  const [command, args] =
    opts.cpus === undefined ? [binary, []] : ["taskset", ["-c", opts.cpus, binary]];
  const child = spawn(command, args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      HOST: "127.0.0.1",
      HTTP_PORT: String(httpPort),
      GRPC_PORT: String(grpcPort),
      REDIS_ADDR: new URL(redis.url).host,
    },
  });
  const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
  try {
    await listening(child);
  } catch (error) {
    child.kill("SIGTERM");
    await redis.stop();
    throw error;
  }
  const pid = child.pid;
  if (pid === undefined) {
    throw new Error("peer process has no pid");
  }
  return {
    pid,
    httpPort,
    grpcPort,
    redis,
    rssBytes: () => rssOf(pid),
    cpuSeconds: () => cpuSecondsOf(pid),
    mainThreadCpuSeconds: () => cpuSecondsOf(pid, pid),
    async stop() {
      child.kill("SIGTERM");
      await exited;
      await redis.stop();
    },
  };
}
