/** What the line that says the service is ready names. */
export interface ReadyLineOptions {
  host: string;
  internalHost: string;
  publicPort: number;
  internalPort: number;
  tls: boolean;
  console: boolean;
  workers: number;
}

/** A bind address as a URL host: a wildcard becomes the loopback a browser on this machine reaches. */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "") {
    return "127.0.0.1";
  }
  if (host === "::") {
    return "[::1]";
  }
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * The one human line of a start (the log is JSON for machines): where the
 * token console and both listeners are, e.g. `perps-token-service ready
 * (2 workers): console http://127.0.0.1:8080/, public API
 * http://127.0.0.1:8080, internal http://127.0.0.1:9090 (key registration,
 * introspection, /auth, /metrics)`.
 */
export function readyLine(opts: ReadyLineOptions): string {
  const scheme = opts.tls ? "https" : "http";
  const publicUrl = `${scheme}://${urlHost(opts.host)}:${opts.publicPort}`;
  const internalUrl = `${scheme}://${urlHost(opts.internalHost)}:${opts.internalPort}`;
  const workers = opts.workers === 1 ? "1 process" : `${opts.workers} workers`;
  const consolePart = opts.console ? `console ${publicUrl}/, ` : "";
  return (
    `perps-token-service ready (${workers}): ${consolePart}public API ${publicUrl}, ` +
    `internal ${internalUrl} (key registration, introspection, /auth, /metrics)`
  );
}
