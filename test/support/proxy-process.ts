import { type ChildProcess, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { connect } from "node:net";

/** A proxy (nginx, caddy) run by a test on 127.0.0.1. */
export interface TestProxy {
  /** Base URL of its one site. */
  readonly url: string;
  /** Stops it (SIGTERM, SIGKILL after 5 s) and removes its folder. */
  stop(): Promise<void>;
}

/**
 * The first of `candidates` that answers `args` with exit 0, or an error
 * saying `missing`: the docs' recipes are tested against real proxies, never
 * skipped.
 */
export function findBinary(candidates: readonly string[], args: string[], missing: string): string {
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, args, { stdio: "ignore" });
    if (probe.error === undefined && probe.status === 0) {
      return candidate;
    }
  }
  throw new Error(missing);
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export interface ProxyChild {
  /** For the error message: "nginx", "caddy". */
  name: string;
  child: ChildProcess;
  /** The port it was told to listen on. */
  port: number;
  /** Its temp folder, removed when it stops. */
  dir: string;
  /** More to show when it fails to start (its own error log). Default nothing. */
  log?: () => string;
}

/**
 * Waits (up to 10 s) until the started proxy accepts connections on its
 * port; a proxy that exits or never listens is stopped and reported with
 * what it printed.
 */
export async function proxyListening(opts: ProxyChild): Promise<TestProxy> {
  const { child, port, dir } = opts;
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      const why = `${output}\n${opts.log?.() ?? ""}`;
      await stop();
      throw new Error(`${opts.name} did not start: ${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}
