import { connect, type Socket } from "node:net";
import { grpcMessageLength } from "./grpc-frame.js";
import {
  Flag,
  FRAME_HEADER,
  FrameType,
  grpcRequestHeaderBlock,
  H2_PREFACE,
  h2Frame,
  settingsFrame,
  windowUpdateFrame,
} from "./h2-frames.js";
import { createHpackDecoder } from "./hpack-decoder.js";

export interface RawGrpcClientOptions {
  /** host:port of an h2c (cleartext HTTP/2) gRPC listener. */
  address: string;
  /** Full method path, e.g. /perps.token.v1.TokenIntrospectionService/IntrospectToken. */
  path: string;
  /** HTTP/2 connections the calls are spread over, in turn. */
  connections: number;
}

/**
 * How a call ended: the answer's message length when it succeeded (one whole
 * message, then trailers with `grpc-status: 0`), else a failure label:
 * `grpc-status <code>` (a gRPC error), `no grpc-status`, `no message`,
 * `malformed`, `reset`, `transport`.
 */
export type RawCallDone = (failure: string | undefined, messageLength: number) => void;

export interface RawGrpcClient {
  /** Sends one pre-framed unary request (grpcFrame). */
  call(frame: Buffer, done: RawCallDone): void;
  close(): void;
}

const SETTINGS_MAX_CONCURRENT_STREAMS = 3;
const SETTINGS_INITIAL_WINDOW_SIZE = 4;
/**
 * Streams this client opens on a connection before the server's SETTINGS say
 * how many it allows: node's and grpc-go's default. A server may refuse
 * streams beyond its limit (node:http2 ends the whole connection with a
 * PROTOCOL_ERROR GOAWAY), so calls beyond it wait in the client, as a
 * gRPC channel's do.
 */
const ASSUMED_MAX_STREAMS = 100;
/** Receive windows this client grants (stream and connection): answers are small, so updates are rare. */
const WINDOW = 1 << 30;
const DEFAULT_WINDOW = 65_535;

interface Pending {
  data: Buffer[];
  /** grpc-status of the stream's last header block, if it had one. */
  status: string | undefined;
  done: RawCallDone;
}

/** Writes a frame header (RFC 9113, 4.1) into `out` at `at`. */
function writeFrameHeader(
  out: Buffer,
  at: number,
  length: number,
  type: number,
  flags: number,
  streamId: number,
) {
  out.writeUIntBE(length, at, 3);
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(streamId & 0x7fffffff, at + 5);
}

/** One connection: a client, and how many calls it holds (open streams and waiting calls). */
interface Session extends RawGrpcClient {
  load(): number;
}

/** A header block that awaits its CONTINUATION frames. */
interface OpenBlock {
  streamId: number;
  endStream: boolean;
  parts: Buffer[];
}

/** The header block fragment of a HEADERS frame's payload, without padding and priority. */
function headerFragment(flags: number, payload: Buffer): Buffer {
  let start = 0;
  let end = payload.length;
  if ((flags & Flag.PADDED) !== 0) {
    start = 1;
    end -= payload[0] ?? 0;
  }
  if ((flags & Flag.PRIORITY) !== 0) {
    start += 5;
  }
  return payload.subarray(start, Math.max(start, end));
}

/**
 * One HTTP/2 connection on a bare socket: each call writes a HEADERS frame
 * (one stateless HPACK block for every request) and a DATA frame that ends
 * the stream; answers are read frame by frame. Their header blocks are
 * HPACK-decoded (bench/hpack-decoder.ts) only for `grpc-status`: a stream
 * succeeded when it ends with status 0 after one whole message, so a server
 * is judged by its status, the same for every server the bench compares.
 * Writes of one tick go out as one. SETTINGS and PING are
 * acknowledged; no more streams are open at once than the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS allows (the calls beyond wait); the client's own send window is not tracked (its requests
 * are a few hundred bytes, and the server replenishes it as it reads).
 */
function connectSession(host: string, port: number, headerBlock: Buffer): Promise<Session> {
  const socket: Socket = connect({ host, port, noDelay: true });
  const pending = new Map<number, Pending>();
  /** Calls waiting for a stream: the server's SETTINGS_MAX_CONCURRENT_STREAMS is reached. */
  const waiting: [frame: Buffer, done: RawCallDone][] = [];
  let maxStreams = ASSUMED_MAX_STREAMS;
  const hpack = createHpackDecoder();
  let openBlock: OpenBlock | undefined;
  let nextStreamId = 1;
  let buffered: Buffer = Buffer.alloc(0);
  let received = 0;
  let closed = false;
  let outgoing: Buffer[] = [];
  const flush = () => {
    const chunks = outgoing;
    outgoing = [];
    if (!closed && chunks.length > 0) {
      socket.write(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    }
  };
  const send = (chunk: Buffer) => {
    if (outgoing.push(chunk) === 1) {
      process.nextTick(flush);
    }
  };
  const finish = (streamId: number, failure?: string) => {
    const stream = pending.get(streamId);
    if (stream === undefined) {
      return;
    }
    pending.delete(streamId);
    startWaiting();
    if (failure !== undefined) {
      stream.done(failure, 0);
      return;
    }
    if (stream.status !== "0") {
      stream.done(
        stream.status === undefined ? "no grpc-status" : `grpc-status ${stream.status}`,
        0,
      );
      return;
    }
    if (stream.data.length === 0) {
      stream.done("no message", 0);
      return;
    }
    const length = grpcMessageLength(
      stream.data.length === 1 ? (stream.data[0] as Buffer) : Buffer.concat(stream.data),
    );
    if (length === undefined) {
      stream.done("malformed", 0);
    } else {
      stream.done(undefined, length);
    }
  };
  const failAll = () => {
    closed = true;
    for (const streamId of [...pending.keys()]) {
      finish(streamId, "transport");
    }
    for (const [, done] of waiting.splice(0)) {
      done("transport", 0);
    }
  };
  // Every block is decoded, a stream's or not: HPACK's table spans the connection.
  const endBlock = (block: OpenBlock) => {
    openBlock = undefined;
    const fields = hpack.decode(
      block.parts.length === 1 ? (block.parts[0] as Buffer) : Buffer.concat(block.parts),
    );
    const stream = pending.get(block.streamId);
    if (stream !== undefined) {
      for (const [name, value] of fields) {
        if (name === "grpc-status") {
          stream.status = value;
        }
      }
    }
    if (block.endStream) {
      finish(block.streamId);
    }
  };
  const onFrame = (type: number, flags: number, streamId: number, payload: Buffer) => {
    switch (type) {
      case FrameType.DATA: {
        pending.get(streamId)?.data.push(payload);
        received += payload.length;
        if (received > WINDOW / 2) {
          send(windowUpdateFrame(0, received));
          received = 0;
        }
        if ((flags & Flag.END_STREAM) !== 0) {
          finish(streamId);
        }
        return;
      }
      case FrameType.HEADERS:
        openBlock = {
          streamId,
          endStream: (flags & Flag.END_STREAM) !== 0,
          parts: [headerFragment(flags, payload)],
        };
        if ((flags & Flag.END_HEADERS) !== 0) {
          endBlock(openBlock);
        }
        return;
      case FrameType.CONTINUATION:
        if (openBlock !== undefined) {
          openBlock.parts.push(payload);
          if ((flags & Flag.END_HEADERS) !== 0) {
            endBlock(openBlock);
          }
        }
        return;
      case FrameType.RST_STREAM:
        finish(streamId, "reset");
        return;
      case FrameType.SETTINGS:
        if ((flags & Flag.ACK) === 0) {
          for (let at = 0; at + 6 <= payload.length; at += 6) {
            if (payload.readUInt16BE(at) === SETTINGS_MAX_CONCURRENT_STREAMS) {
              maxStreams = payload.readUInt32BE(at + 2);
            }
          }
          startWaiting();
          send(h2Frame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(0)));
        }
        return;
      case FrameType.PING:
        if ((flags & Flag.ACK) === 0) {
          send(h2Frame(FrameType.PING, Flag.ACK, 0, Buffer.from(payload)));
        }
        return;
      case FrameType.GOAWAY:
        failAll();
        socket.destroy();
        return;
      default:
        return;
    }
  };
  socket.on("data", (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    let offset = 0;
    while (buffered.length - offset >= FRAME_HEADER) {
      const length = buffered.readUIntBE(offset, 3);
      const end = offset + FRAME_HEADER + length;
      if (buffered.length < end) {
        break;
      }
      const streamId = buffered.readUInt32BE(offset + 5) & 0x7fffffff;
      onFrame(
        buffered[offset + 3] ?? -1,
        buffered[offset + 4] ?? 0,
        streamId,
        buffered.subarray(offset + FRAME_HEADER, end),
      );
      offset = end;
    }
    buffered = offset === buffered.length ? Buffer.alloc(0) : buffered.subarray(offset);
  });
  socket.on("error", () => socket.destroy());
  socket.on("close", failAll);
  const open = (frame: Buffer, done: RawCallDone) => {
    const streamId = nextStreamId;
    nextStreamId += 2;
    pending.set(streamId, { data: [], status: undefined, done });
    // HEADERS and DATA in one buffer: one allocation and copy per call.
    const out = Buffer.allocUnsafe(2 * FRAME_HEADER + headerBlock.length + frame.length);
    writeFrameHeader(out, 0, headerBlock.length, FrameType.HEADERS, Flag.END_HEADERS, streamId);
    headerBlock.copy(out, FRAME_HEADER);
    const data = FRAME_HEADER + headerBlock.length;
    writeFrameHeader(out, data, frame.length, FrameType.DATA, Flag.END_STREAM, streamId);
    frame.copy(out, data + FRAME_HEADER);
    send(out);
  };
  function startWaiting(): void {
    while (!closed && pending.size < maxStreams) {
      const next = waiting.shift();
      if (next === undefined) {
        return;
      }
      open(next[0], next[1]);
    }
  }
  const client: Session = {
    call(frame, done) {
      if (closed) {
        done("transport", 0);
        return;
      }
      if (pending.size >= maxStreams) {
        waiting.push([frame, done]);
        return;
      }
      open(frame, done);
    },
    load: () => pending.size + waiting.length,
    close() {
      closed = true;
      socket.destroy();
    },
  };
  return new Promise((resolve, reject) => {
    socket.once("connect", () => {
      socket.write(
        Buffer.concat([
          H2_PREFACE,
          settingsFrame([[SETTINGS_INITIAL_WINDOW_SIZE, WINDOW]]),
          windowUpdateFrame(0, WINDOW - DEFAULT_WINDOW),
        ]),
      );
      resolve(client);
    });
    socket.once("error", reject);
  });
}

/**
 * A unary gRPC client on bare sockets (see connectSession): no HTTP/2
 * library, HPACK state, channel, filters, deadlines or protobuf, so it costs
 * a small fraction of the service's CPU per call, and on a machine the
 * service shares, the load generator takes little from it.
 */
export async function connectRawGrpc(opts: RawGrpcClientOptions): Promise<RawGrpcClient> {
  const separator = opts.address.lastIndexOf(":");
  const host = opts.address.slice(0, separator);
  const port = Number(opts.address.slice(separator + 1));
  const headerBlock = grpcRequestHeaderBlock(opts.address, opts.path);
  const sessions = await Promise.all(
    Array.from({ length: opts.connections }, () => connectSession(host, port, headerBlock)),
  );
  let turn = 0;
  return {
    // The connection holding the fewest calls, ties taken in turn. Plain
    // turns would pile a closed loop's calls onto the slowest connection
    // (every caller answered elsewhere sends a quarter of its next calls to
    // it), past what the server allows on one connection.
    call(frame, done) {
      turn++;
      let best: Session | undefined;
      for (let i = 0; i < sessions.length; i++) {
        const session = sessions[(turn + i) % sessions.length];
        if (session !== undefined && (best === undefined || session.load() < best.load())) {
          best = session;
        }
      }
      if (best === undefined) {
        done("transport", 0);
        return;
      }
      best.call(frame, done);
    },
    close() {
      for (const session of sessions) {
        session.close();
      }
    },
  };
}
