import { randomFillSync } from "node:crypto";

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

function checkSize(bytes: number): void {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > POOL_BYTES) {
    throw new RangeError(`random bytes come 1 to ${POOL_BYTES} at a time, not ${bytes}`);
  }
}

/**
 * Copies `bytes` fresh bytes from the CSPRNG into `target` at `offset`. The
 * bytes come from a pool filled by one `randomFillSync` per 4 KiB, as node
 * does for `randomUUID`: one call per secret costs several microseconds, more
 * than the rest of making a token. No byte is handed out twice; the pool
 * belongs to this process (WORKERS are separate processes, not forks of it).
 */
export function randomInto(target: Buffer, offset: number, bytes: number): void {
  checkSize(bytes);
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  pool.copy(target, offset, used, used + bytes);
  // Spent bytes are wiped, so the pool never holds a copy of a handed-out secret.
  pool.fill(0, used, used + bytes);
  used += bytes;
}

/** `bytes` fresh bytes from the CSPRNG (see {@link randomInto}) as base64url text. */
export function randomText(bytes: number): string {
  checkSize(bytes);
  const out = Buffer.alloc(bytes);
  randomInto(out, 0, bytes);
  return out.toString("base64url");
}
