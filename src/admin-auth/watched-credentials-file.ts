import { readFileSync, statSync } from "node:fs";
import { ConfigError } from "../config/config.js";
import { untrustedReason } from "../config/trusted-path.js";
import {
  type CredentialEntry,
  credentialLookup,
  parseCredentialsFile,
} from "./credentials-file.js";

/** A re-read that left no new entries: the file refused (the old entries stay) or gone (none left). */
export type CredentialsFileTrouble = { error: ConfigError } | { missing: string };

/** A credentials file as one reading found it. */
export interface CredentialsFileRead {
  path: string;
  /** The variable naming the file (ADMIN_CREDENTIALS_FILE, SERVICE_CREDENTIALS_FILE), for messages. */
  variable: string;
  entries: CredentialEntry[];
  /** The file's version (versionOf) taken just before the reading. */
  version: string;
}

export interface WatchedCredentialsFileOptions {
  /** The file's first reading (readCredentialsFile, at start): watched from there. */
  file: CredentialsFileRead;
  /** How often the file is looked at for a change. Default 1000 ms. */
  watchIntervalMs?: number;
  /**
   * Told after each re-read: the number of entries, why the file was refused
   * (the old entries stay), or that it is gone (no entry any more).
   */
  onReload?: (outcome: { entries: number } | CredentialsFileTrouble) => void;
}

/**
 * A holder's `onReload` (counting its `operators` or `services`) as the
 * watcher's, which counts `entries`.
 */
export function reloadCountedAs<K extends string>(
  key: K,
  onReload: ((outcome: Record<K, number> | CredentialsFileTrouble) => void) | undefined,
): WatchedCredentialsFileOptions["onReload"] {
  return onReload === undefined
    ? undefined
    : (outcome) =>
        onReload(
          "entries" in outcome ? ({ [key]: outcome.entries } as Record<K, number>) : outcome,
        );
}

/** A credentials file's entries, kept current. */
export interface WatchedCredentialsFile {
  /** Whose secret this is (compared with every entry, in constant time), or undefined. */
  nameOf(secret: string): string | undefined;
  /**
   * Re-reads the file now (SIGHUP); a bad file keeps the entries in use and
   * throws its ConfigError; a missing one leaves none.
   */
  reload(): void;
  /** Stops watching the file. */
  close(): void;
}

/**
 * Reads and parses a credentials file; a ConfigError names the variable, the
 * file and, when it is the file's content, the line. A file that another user
 * could have written is refused (untrustedReason): its lines would choose who
 * is let in.
 */
export function readCredentialsFile(path: string, variable: string): CredentialsFileRead {
  // Taken first: a change made during the reading is then seen by the next poll.
  const version = versionOf(path);
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
  return { path, variable, entries: parseCredentialsFile(text, path, variable), version };
}

/**
 * Keeps a credentials file's entries current from its first reading: it is
 * re-read when it changes, so that an entry is added or removed without a
 * restart. A file broken (or made writable by others)
 * while the service runs is refused and the entries in use stay, told
 * through `onReload`: an edit half done must not lock everyone out. A file
 * deleted leaves no entry until it is back: deleting it is the plainest way
 * to revoke them all, and keeping entries that the file no longer lists
 * would be trusting a file that is not there.
 */
export function watchCredentialsFile(opts: WatchedCredentialsFileOptions): WatchedCredentialsFile {
  const { path, variable } = opts.file;
  // The file as it was read: a poll compares with it, not with its own first
  // look, which could come after a change made right after the start.
  let seen = opts.file.version;
  let lookup = credentialLookup(opts.file.entries);
  const reload = () => {
    seen = versionOf(path);
    if (seen === "") {
      lookup = () => undefined;
      opts.onReload?.({ missing: path });
      return;
    }
    let entries: CredentialEntry[];
    try {
      ({ entries } = readCredentialsFile(path, variable));
    } catch (err) {
      if (err instanceof ConfigError) {
        opts.onReload?.({ error: err });
      }
      throw err;
    }
    lookup = credentialLookup(entries);
    opts.onReload?.({ entries: entries.length });
  };
  const poll = setInterval(() => {
    if (versionOf(path) === seen) {
      return;
    }
    try {
      reload();
    } catch {
      // Told through onReload; the entries in use stay.
    }
  }, opts.watchIntervalMs ?? 1000);
  poll.unref();
  return {
    nameOf: (secret) => lookup(secret),
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
