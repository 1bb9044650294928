import type { ListPosition } from "../store/list-named-tokens.js";

// ListTokens' page_token: where the next page resumes (a token's expiry and
// name), in base64url so that clients treat it as opaque. It carries nothing
// the caller may not see (their own token's name), so it is not sealed: a
// made-up one only moves where the caller's own listing resumes.

/** Versioned text before base64url: `1:<expiresAtMs>:<name>`. */
const PAGE_TOKEN_TEXT = /^1:(\d{1,16}):(.+)$/s;
/** A name of at most 128 code points is at most 512 UTF-8 bytes. */
const MAX_NAME_BYTES = 512;

/** The page_token of the page that resumes after `position`. */
export function encodePageToken(position: ListPosition): string {
  return Buffer.from(`1:${position.expiresAtMs}:${position.name}`, "utf8").toString("base64url");
}

/** The position a page_token stands for, or undefined for anything this service did not issue. */
export function decodePageToken(pageToken: string): ListPosition | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(pageToken)) {
    return undefined;
  }
  const bytes = Buffer.from(pageToken, "base64url");
  const text = bytes.toString("utf8");
  // Not UTF-8 (replacement characters), or not base64url's canonical spelling.
  if (!Buffer.from(text, "utf8").equals(bytes) || bytes.toString("base64url") !== pageToken) {
    return undefined;
  }
  const match = PAGE_TOKEN_TEXT.exec(text);
  const [, ms, name] = match ?? [];
  if (ms === undefined || name === undefined || Buffer.byteLength(name) > MAX_NAME_BYTES) {
    return undefined;
  }
  const expiresAtMs = Number(ms);
  return Number.isSafeInteger(expiresAtMs) ? { expiresAtMs, name } : undefined;
}
