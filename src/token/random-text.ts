import { randomFillSync } from "node:crypto";

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/**
 * `bytes` fresh bytes from the CSPRNG as base64url text. The bytes come from
 * a pool filled by one `randomFillSync` per 4 KiB, as node does for
 * `randomUUID`: one call per secret costs several microseconds, more than
 * the rest of making a token. No byte is handed out twice; the pool belongs
 * to this process (WORKERS are separate processes, not forks of it).
 */
export function randomText(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > POOL_BYTES) {
    throw new RangeError(`randomText takes 1 to ${POOL_BYTES} bytes, got ${bytes}`);
  }
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const text = pool.toString("base64url", used, used + bytes);
  // Spent bytes are wiped, so the pool never holds a copy of a handed-out secret.
  pool.fill(0, used, used + bytes);
  used += bytes;
  return text;
}
