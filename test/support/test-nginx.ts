import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/process/free-port.js";

export interface TestNginx {
  /** Base URL of its one server block. */
  readonly url: string;
  /** Stops it (SIGTERM, SIGKILL after 5 s) and removes its folder. */
  stop(): Promise<void>;
}

// Debian puts it in /usr/sbin, which is not on a non-root PATH.
const CANDIDATES = ["nginx", "/usr/sbin/nginx", "/usr/local/sbin/nginx"];

/** The nginx binary, or a clear error: the README's snippet is tested against a real nginx, never skipped. */
export function nginxBinary(): string {
  for (const candidate of CANDIDATES) {
    const probe = spawnSync(candidate, ["-v"], { stdio: "ignore" });
    if (probe.error === undefined && probe.status === 0) {
      return candidate;
    }
  }
  throw new Error(
    "nginx is not installed: the README's auth_request snippet is tested against a real nginx " +
      "(install it with `apt-get install nginx-light`, as .ci/run does)",
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
 * A private nginx in the foreground (`daemon off`), as a child of this
 * process, with `server` (the directives of one server block, without
 * `listen`) on a free port of 127.0.0.1. Its config, pid, logs and temp
 * files live in a temp folder: no root needed, nothing shared.
 */
export async function startTestNginx(server: string): Promise<TestNginx> {
  const binary = nginxBinary();
  const dir = mkdtempSync(join(tmpdir(), "perps-nginx-"));
  // Run as root, nginx's workers drop to an unprivileged user that must reach the temp paths.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const errorLog = join(dir, "error.log");
  const conf = join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `pid ${join(dir, "nginx.pid")};
error_log ${errorLog} info;
worker_processes 1;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${join(dir, "client_body")};
  proxy_temp_path ${join(dir, "proxy")};
  fastcgi_temp_path ${join(dir, "fastcgi")};
  uwsgi_temp_path ${join(dir, "uwsgi")};
  scgi_temp_path ${join(dir, "scgi")};
  server {
    listen 127.0.0.1:${port};
${server}
  }
}
`,
  );
  // -e: the log of start-up errors, before the config names one (the default is under /var/log).
  const child: ChildProcess = spawn(
    binary,
    ["-p", dir, "-c", conf, "-e", errorLog, "-g", "daemon off;"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const log = () => (existsSync(errorLog) ? readFileSync(errorLog, "utf8").slice(-4000) : "");

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
      const why = `${output}\n${log()}`;
      await stop();
      throw new Error(`nginx did not start: ${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}
