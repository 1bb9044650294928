// The service's listening ports at start: whether something already listens
// on them (checked before anything starts), the one line and exit code of a
// start that found a port (or the embedded data folder) in use, the one line
// that says where they listen once ready, and free ports for what needs one
// (the embedded Redis without a socket; the tests' and the bench's servers).

import { createServer, type Server } from "node:net";

// Ports in use.

/** A listener of the service: the variable that sets its port, where it binds. */
export interface ListenAddress {
  /** `PUBLIC_PORT` or `INTERNAL_PORT`. */
  variable: string;
  host: string;
  /** 0 picks a free port, so it is never in use. */
  port: number;
}

/** Whether a plain listen on `address` fails with EADDRINUSE; other failures are left to the real listen. */
function portInUse(address: ListenAddress): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "EADDRINUSE"));
    // Never reusePort: the probe must fail where another instance listens,
    // even one that set SO_REUSEPORT (the kernel would let both share the port).
    // Exclusive: its own socket, never a cluster primary's shared handle.
    probe.listen({ port: address.port, host: address.host, exclusive: true }, () =>
      probe.close(() => resolve(false)),
    );
  });
}

/**
 * The listeners whose port something already listens on, checked by listening
 * on each for a moment. Run before anything is started, so that a start that
 * cannot listen stops nothing and starts nothing; the real listen can still
 * lose a race and must handle EADDRINUSE too.
 */
export async function portsInUse(addresses: readonly ListenAddress[]): Promise<ListenAddress[]> {
  const checked = await Promise.all(
    addresses.map(async (address) => ({
      address,
      busy: address.port !== 0 && (await portInUse(address)),
    })),
  );
  return checked.filter((c) => c.busy).map((c) => c.address);
}

// A start that found something in use.

/**
 * The exit code of a start that found a port or the embedded data folder in
 * use: not a configuration error (2), as the same start succeeds once the
 * other instance has stopped, so a process manager may retry it.
 */
export const IN_USE_EXIT_CODE = 3;

export interface InUse {
  /** Listeners whose port something already listens on. */
  ports: readonly ListenAddress[];
  /** The embedded data folder, when a live service process holds its lock. */
  folder?: { dir: string; ownerPid: number | undefined };
}

/** Thrown by a start that cannot listen; its message is the one line to print. */
export class InUseError extends Error {
  override readonly name = "InUseError";
}

/**
 * The one line a start that found something in use prints: what is in use,
 * by whom when known, and which variables choose another.
 */
export function inUseLine(inUse: InUse): string {
  const what: string[] = inUse.ports.map(
    (p) => `port ${p.port} of ${p.host} (${p.variable}) is in use`,
  );
  if (inUse.folder !== undefined) {
    what.push(
      `the data folder ${inUse.folder.dir} (EMBEDDED_REDIS_DIR) is in use by ${inUse.folder.ownerPid === undefined ? "another service process" : `the service with pid ${inUse.folder.ownerPid}`}`,
    );
  }
  const variables = [
    ...inUse.ports.map((p) => p.variable),
    ...(inUse.folder === undefined ? [] : ["EMBEDDED_REDIS_DIR"]),
  ];
  return `Cannot start: ${what.join("; ")}. Stop the other instance, or choose another with ${variables.join(", ")}.`;
}

/** The listener an EADDRINUSE of the real listen (a start that lost the race) is about, if it is one. */
export function listenerInUse(
  err: unknown,
  listeners: readonly ListenAddress[],
): ListenAddress | undefined {
  const e = err as NodeJS.ErrnoException & { port?: number; address?: string };
  if (e === null || typeof e !== "object" || e.code !== "EADDRINUSE") {
    return undefined;
  }
  return (
    listeners.find((l) => l.port !== 0 && l.port === e.port) ?? {
      variable: "PUBLIC_PORT or INTERNAL_PORT",
      host: e.address ?? "its address",
      port: e.port ?? 0,
    }
  );
}

// A start that is ready.

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

// Free ports.

function listenOnAnyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : 0;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) {
    throw new Error("no free port");
  }
  return port;
}

/**
 * `count` distinct TCP ports on 127.0.0.1 that were free a moment ago. They
 * are held open together while they are picked: one at a time, the system
 * may hand out a port it just took back twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      servers.push(await listenOnAnyPort());
    }
    return servers.map(portOf);
  } finally {
    await Promise.all(
      servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    );
  }
}
