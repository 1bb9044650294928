import type { ListenAddress } from "./ports-in-use.js";

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
