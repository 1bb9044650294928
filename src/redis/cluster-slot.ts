// CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with.
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    }
    table[i] = crc & 0xffff;
  }
  return table;
})();

function crc16(bytes: Buffer, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ (bytes[i] ?? 0)) & 0xff] ?? 0);
  }
  return crc;
}

/**
 * The cluster slot of a key (0–16383), as `CLUSTER KEYSLOT` computes it: of
 * the hash tag (`{…}`, first `{` to the next `}`, when not empty), else of
 * the whole key. ioredis exports nothing public for it.
 */
export function clusterSlotOf(key: string): number {
  const bytes = Buffer.from(key);
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) {
      return crc16(bytes, open + 1, close) & 16383;
    }
  }
  return crc16(bytes, 0, bytes.length) & 16383;
}
