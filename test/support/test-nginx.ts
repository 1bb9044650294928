import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/process/ports.js";
import { findBinary, proxyListening, type TestProxy } from "./proxy-process.js";

export type TestNginx = TestProxy;

// Debian puts it in /usr/sbin, which is not on a non-root PATH.
const CANDIDATES = ["nginx", "/usr/sbin/nginx", "/usr/local/sbin/nginx"];

/** The nginx binary, or a clear error: the README's snippet is tested against a real nginx, never skipped. */
export function nginxBinary(): string {
  return findBinary(
    CANDIDATES,
    ["-v"],
    "nginx is not installed: the README's auth_request snippet is tested against a real nginx " +
      "(install it with `apt-get install nginx-light`, as .ci/run does)",
  );
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
  const log = () => (existsSync(errorLog) ? readFileSync(errorLog, "utf8").slice(-4000) : "");
  return proxyListening({ name: "nginx", child, port, dir, log });
}
