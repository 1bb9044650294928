const MS_PER_SECOND = 1000;

/** The instant a token expires, in Unix milliseconds. */
export function expiresAtMs(nowMs: number, expiresInSeconds: number): number {
  return nowMs + expiresInSeconds * MS_PER_SECOND;
}

/** The UTC calendar date (`YYYY-MM-DD`) of an instant. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
