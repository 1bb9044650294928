// The few HTTP/2 frames (RFC 9113) a bare unary gRPC client writes, and an
// HPACK header block that needs no state (RFC 7541: static-table entries and
// literals without indexing), so the same bytes serve every request.

export const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
export const FrameType = {
  DATA: 0,
  HEADERS: 1,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;
export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;
/** Frame header length. */
export const FRAME_HEADER = 9;

/** One frame: 24-bit length, type, flags, 31-bit stream id, payload. */
export function h2Frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const frame = Buffer.alloc(FRAME_HEADER + payload.length);
  frame.writeUIntBE(payload.length, 0, 3);
  frame[3] = type;
  frame[4] = flags;
  frame.writeUInt32BE(streamId & 0x7fffffff, 5);
  payload.copy(frame, FRAME_HEADER);
  return frame;
}

/** SETTINGS with (id, value) pairs. */
export function settingsFrame(settings: readonly (readonly [number, number])[]): Buffer {
  const payload = Buffer.alloc(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return h2Frame(FrameType.SETTINGS, 0, 0, payload);
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment & 0x7fffffff, 0);
  return h2Frame(FrameType.WINDOW_UPDATE, 0, streamId, payload);
}

/** An HPACK integer with an `prefixBits`-bit prefix, the first byte's high bits `first`. */
function hpackInteger(value: number, prefixBits: number, first: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    return [first | value];
  }
  const out = [first | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

function hpackString(text: string): number[] {
  const bytes = [...Buffer.from(text, "latin1")];
  return [...hpackInteger(bytes.length, 7, 0), ...bytes];
}

/**
 * The header block of a gRPC unary request, without any HPACK state:
 * `:method: POST` and `:scheme: http` indexed from the static table, the
 * rest literal without indexing (names from the static table where it has
 * them), no Huffman coding.
 */
export function grpcRequestHeaderBlock(authority: string, path: string): Buffer {
  return Buffer.from([
    0x83, // :method: POST (static 3)
    0x86, // :scheme: http (static 6)
    ...hpackInteger(4, 4, 0), // :path (static 4), literal value
    ...hpackString(path),
    ...hpackInteger(1, 4, 0), // :authority (static 1)
    ...hpackString(authority),
    ...hpackInteger(31, 4, 0), // content-type (static 31)
    ...hpackString("application/grpc"),
    0x00, // te: a new name
    ...hpackString("te"),
    ...hpackString("trailers"),
  ]);
}
