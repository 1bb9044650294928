import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/process/ports.js";
import { findBinary, proxyListening, type TestProxy } from "./proxy-process.js";

export type TestCaddy = TestProxy;

const CANDIDATES = ["caddy", "/usr/bin/caddy", "/usr/local/bin/caddy"];

/** The caddy binary, or a clear error: the docs' Caddyfile is tested against a real caddy, never skipped. */
export function caddyBinary(): string {
  return findBinary(
    CANDIDATES,
    ["version"],
    "caddy is not installed: the docs' forward_auth recipe is tested against a real caddy " +
      "(install it with `apt-get install caddy`, as .ci/run does)",
  );
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
  return proxyListening({ name: "caddy", child, port, dir });
}
