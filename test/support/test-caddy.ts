import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/process/free-port.js";

export interface TestCaddy {
  /** Base URL of its one site. */
  readonly url: string;
  /** Stops it (SIGTERM, SIGKILL after 5 s) and removes its folder. */
  stop(): Promise<void>;
}

const CANDIDATES = ["caddy", "/usr/bin/caddy", "/usr/local/bin/caddy"];

/** The caddy binary, or a clear error: the docs' Caddyfile is tested against a real caddy, never skipped. */
export function caddyBinary(): string {
  for (const candidate of CANDIDATES) {
    const probe = spawnSync(candidate, ["version"], { stdio: "ignore" });
    if (probe.error === undefined && probe.status === 0) {
      return candidate;
    }
  }
  throw new Error(
    "caddy is not installed: the docs' forward_auth recipe is tested against a real caddy " +
      "(install it with `apt-get install caddy`, as .ci/run does)",
  );
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

/**
 * A private caddy in the foreground (`caddy run`), as a child of this
 * process, serving `site` (one Caddyfile site block whose address is
 * `SITE_ADDRESS`) on a free port of 127.0.0.1. No admin endpoint, no
 * automatic HTTPS, and HOME, XDG_DATA_HOME and XDG_CONFIG_HOME in a temp
 * folder: caddy stores nothing outside it.
 */
export async function startTestCaddy(site: string, siteAddress: string): Promise<TestCaddy> {
  const binary = caddyBinary();
  const dir = mkdtempSync(join(tmpdir(), "perps-caddy-"));
  for (const sub of ["home", "data", "config", "storage"]) {
    mkdirSync(join(dir, sub));
  }
  const port = await freePort();
  const caddyfile = join(dir, "Caddyfile");
  writeFileSync(
    caddyfile,
    `{
	admin off
	auto_https off
	storage file_system ${join(dir, "storage")}
}

${site.replaceAll(siteAddress, `http://127.0.0.1:${port}`)}`,
  );
  const child: ChildProcess = spawn(
    binary,
    ["run", "--config", caddyfile, "--adapter", "caddyfile"],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: join(dir, "home"),
        XDG_DATA_HOME: join(dir, "data"),
        XDG_CONFIG_HOME: join(dir, "config"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
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
      const why = output;
      await stop();
      throw new Error(`caddy did not start: ${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}
