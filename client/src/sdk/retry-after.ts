/**
 * Seconds to wait from a `retry-after` value: delta-seconds (what this service
 * sends) or an HTTP date (what a proxy in front of it may send). Undefined when
 * absent or unreadable, so a bad header never hides the error it came with.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) {
    return undefined;
  }
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    return Number(text);
  }
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - nowMs) / 1000));
}
