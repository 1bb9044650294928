import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/**
 * Where `npm run build` (scripts/build.mjs) writes the token console: its
 * page, script and style, bundled from src/console/. The same URL from
 * src/server and dist/server, which sit at the same depth.
 */
export const CONSOLE_DIR = new URL("../../dist/console/", import.meta.url);

/** The URL path prefix of the console's script, style and icon; the page itself is `/`. */
export const CONSOLE_PREFIX = "/console/";

/** One file of the console, ready to send. */
export interface ConsoleFile {
  body: Buffer;
  /** The body gzipped once at load, sent to clients that accept gzip. */
  gzip: Buffer;
  contentType: string;
  /** Strong validator of the body: a rebuilt console is never served from a stale cache. */
  etag: string;
}

/** The console's files by URL path: `/` (the page) and `/console/<file>`. */
export type ConsoleAssets = ReadonlyMap<string, ConsoleFile>;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** The built console is missing or incomplete. */
export class ConsoleAssetsError extends Error {
  override readonly name = "ConsoleAssetsError";
}

/**
 * Reads the built console into memory once, at start-up: its files never
 * change while the service runs (a rebuild is a new deployment). Throws
 * ConsoleAssetsError when `dir` holds no built console.
 */
export function loadConsoleAssets(dir: URL | string = CONSOLE_DIR): ConsoleAssets {
  const root = typeof dir === "string" ? dir : fileURLToPath(dir);
  if (statSync(join(root, "index.html"), { throwIfNoEntry: false }) === undefined) {
    throw new ConsoleAssetsError(`the token console is not built: no index.html in ${root}`);
  }
  const files = new Map<string, ConsoleFile>();
  for (const name of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType === undefined) {
      continue;
    }
    const body = readFileSync(join(root, name));
    const path = name === "index.html" ? "/" : `${CONSOLE_PREFIX}${name.split(sep).join("/")}`;
    files.set(path, {
      body,
      gzip: gzipSync(body, { level: 9 }),
      contentType,
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
    });
  }
  return files;
}
