/**
 * Copies digests into slabs that hold only digests. A copy from node's shared
 * 8 KiB pool (Buffer.from) would keep its whole slab alive, with whatever
 * each request allocated beside it: about 300 bytes per cached token, measured.
 */
export function createDigestSlabs(slabBytes: number): (digest: Buffer) => Buffer {
  let slab = Buffer.allocUnsafeSlow(slabBytes);
  let used = 0;
  return (digest) => {
    if (used + digest.length > slab.length) {
      slab = Buffer.allocUnsafeSlow(Math.max(slabBytes, digest.length));
      used = 0;
    }
    const copy = slab.subarray(used, used + digest.length);
    digest.copy(copy);
    used += digest.length;
    return copy;
  };
}
