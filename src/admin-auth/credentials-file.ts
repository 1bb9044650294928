import { createHash, timingSafeEqual } from "node:crypto";
import { ConfigError } from "../config/config.js";

/**
 * One line of a credentials file: an operator of ADMIN_CREDENTIALS_FILE or a
 * service of SERVICE_CREDENTIALS_FILE, its name and the SHA-256 of its secret.
 */
export interface CredentialEntry {
  name: string;
  sha256: Buffer;
}

// `<operator name> sha256:<64 hex>`; a name is what audit lines and metrics
// carry, so it is kept plain.
const LINE = /^([A-Za-z0-9._@-]{1,64})[ \t]+sha256:([0-9a-fA-F]{64})$/;

/**
 * Parses the operators' credentials file (or the services', which has its
 * format, named by `variable` in errors): one operator a line,
 * `<operator name> sha256:<64 hex of the secret's SHA-256>`, blank lines and
 * `#` comments allowed. Other tools write this format, so it is strict: a
 * line that does not match, or a name given twice, is a ConfigError naming
 * the file and the line (never the line's text: it may be a pasted secret).
 */
export function parseCredentialsFile(
  text: string,
  path: string,
  variable = "ADMIN_CREDENTIALS_FILE",
): CredentialEntry[] {
  const entries: CredentialEntry[] = [];
  const names = new Set<string>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) {
      return;
    }
    const where = `${variable} ${path} line ${index + 1}`;
    const match = LINE.exec(line);
    if (match?.[1] === undefined || match[2] === undefined) {
      throw new ConfigError(
        `${where}: expected "<operator name> sha256:<64 hex digits of the secret's SHA-256>"`,
      );
    }
    if (names.has(match[1])) {
      throw new ConfigError(`${where}: operator "${match[1]}" is listed twice`);
    }
    names.add(match[1]);
    entries.push({ name: match[1], sha256: Buffer.from(match[2], "hex") });
  });
  return entries;
}

/** A credentials file's line for an operator whose secret has this SHA-256 (hex). */
export function credentialsLine(name: string, sha256Hex: string): string {
  return `${name} sha256:${sha256Hex}`;
}

/**
 * Whose secret this is among `entries` (its name), or undefined: its SHA-256
 * is compared with every entry's, each in constant time and none skipped, so
 * the time taken does not tell which one (or none) matched.
 */
export function credentialLookup(
  entries: readonly CredentialEntry[],
): (secret: string) => string | undefined {
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
