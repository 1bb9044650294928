import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { ConfigError } from "../config/config.js";
import { untrustedReason } from "../config/trusted-path.js";
import type { OperatorLookup } from "./admin-auth-interceptor.js";
import { type OperatorEntry, parseCredentialsFile } from "./credentials-file.js";

export interface OperatorCredentialsOptions {
  /** ADMIN_CREDENTIALS_FILE (or SERVICE_CREDENTIALS_FILE, same format). */
  path: string;
  /** The variable naming the file, for messages. Default ADMIN_CREDENTIALS_FILE. */
  variable?: string;
  /** How often the file is looked at for a change. Default 1000 ms. */
  watchIntervalMs?: number;
  /**
   * Told after each re-read: the number of operators, why the file was
   * refused (the old set stays), or that it is gone (no operator any more).
   */
  onReload?: (
    outcome: { operators: number } | { error: ConfigError } | { missing: string },
  ) => void;
}

/** The operators of ADMIN_CREDENTIALS_FILE, kept current. */
export interface OperatorCredentials {
  /** The operator whose secret this is, or undefined: compared with every operator, in constant time. */
  operatorOf: OperatorLookup;
  /**
   * Re-reads the file now (SIGHUP); a bad file keeps the operators in use and
   * throws its ConfigError; a missing one leaves no operator.
   */
  reload(): void;
  /** Stops watching the file. */
  close(): void;
}

/**
 * Reads and parses ADMIN_CREDENTIALS_FILE; a ConfigError names the file and,
 * when it is the file's content, the line. A file that another user could
 * have written is refused (untrustedReason): its lines would choose the
 * operators.
 */
export function readCredentialsFile(
  path: string,
  variable = "ADMIN_CREDENTIALS_FILE",
): OperatorEntry[] {
  let text: string;
  try {
    const untrusted = untrustedReason(path, "file");
    if (untrusted !== undefined) {
      throw new ConfigError(
        `${variable}: ${path} ${untrusted}; only this service's user (or root) may be able to write it (chown it, chmod go-w)`,
      );
    }
    text = readFileSync(path, "utf8");
  } catch (err) {
    if (err instanceof ConfigError) {
      throw err;
    }
    const code = (err as { code?: string }).code ?? String(err);
    throw new ConfigError(`${variable}: cannot read ${path} (${code})`);
  }
  return parseCredentialsFile(text, path, variable);
}

/**
 * Which of these operators presents a secret: its SHA-256 is compared with
 * every operator's, each in constant time and none skipped, so the time taken
 * does not tell which one (or none) matched.
 */
export function operatorLookup(entries: readonly OperatorEntry[]): OperatorLookup {
  return (secret) => {
    const presented = createHash("sha256").update(secret, "utf8").digest();
    let found: string | undefined;
    for (const entry of entries) {
      if (timingSafeEqual(presented, entry.sha256) && found === undefined) {
        found = entry.name;
      }
    }
    return found;
  };
}

/**
 * Loads ADMIN_CREDENTIALS_FILE (a bad one throws its ConfigError: the start
 * stops) and re-reads it when it changes, so that an operator is added or
 * removed without a restart. A file broken (or made writable by others)
 * while the service runs is refused and the operators in use stay, told
 * through `onReload`: an edit half done must not lock every operator out. A
 * file deleted leaves no operator until it is back: deleting it is the
 * plainest way to revoke them all, and keeping operators that the file no
 * longer lists would be trusting a file that is not there.
 */
export function loadOperatorCredentials(opts: OperatorCredentialsOptions): OperatorCredentials {
  // The file as it was read: a poll compares with it, not with its own first
  // look, which could come after a change made right after the start.
  let seen = versionOf(opts.path);
  let lookup = operatorLookup(readCredentialsFile(opts.path, opts.variable));
  const reload = () => {
    seen = versionOf(opts.path);
    if (seen === "") {
      lookup = () => undefined;
      opts.onReload?.({ missing: opts.path });
      return;
    }
    let entries: OperatorEntry[];
    try {
      entries = readCredentialsFile(opts.path, opts.variable);
    } catch (err) {
      if (err instanceof ConfigError) {
        opts.onReload?.({ error: err });
      }
      throw err;
    }
    lookup = operatorLookup(entries);
    opts.onReload?.({ operators: entries.length });
  };
  const poll = setInterval(() => {
    if (versionOf(opts.path) === seen) {
      return;
    }
    try {
      reload();
    } catch {
      // Told through onReload; the operators in use stay.
    }
  }, opts.watchIntervalMs ?? 1000);
  poll.unref();
  return {
    operatorOf: (secret) => lookup(secret),
    reload,
    close() {
      clearInterval(poll);
    },
  };
}

/** What tells one version of a file from the next: its inode, size and change times ("" when missing). */
function versionOf(path: string): string {
  try {
    const stat = statSync(path);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  } catch {
    return "";
  }
}
