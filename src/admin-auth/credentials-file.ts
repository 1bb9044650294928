import { ConfigError } from "../config/config.js";

/** One operator of ADMIN_CREDENTIALS_FILE: the name and the SHA-256 of the secret. */
export interface OperatorEntry {
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
): OperatorEntry[] {
  const entries: OperatorEntry[] = [];
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
