import { constants as h2constants, type ServerHttp2Stream } from "node:http2";
import type { NodeServerRequest } from "./node-handler.js";

/** What a body is read from: node's request (HTTP/1.1, HTTP/2 compat) or a raw HTTP/2 stream. */
export type BodySource = NodeServerRequest | ServerHttp2Stream;

/** A request body read in full, or up to the first chunk past a limit. */
export interface RequestBody {
  readonly chunks: readonly Buffer[];
  /** Bytes in `chunks`. */
  readonly total: number;
  /** False when reading stopped past the limit: the rest is still in the request, paused. */
  readonly ended: boolean;
}

/**
 * A body whose first bytes announce its size (a gRPC envelope's 5-byte
 * prefix): once `bytes` have arrived, `tooLarge` of them says whether to stop
 * reading there, as past the limit, without waiting for the bytes announced.
 */
export interface AnnouncedSize {
  readonly bytes: number;
  readonly tooLarge: (head: Buffer) => boolean;
}

/**
 * Reads the body until it ends, or until it holds more than `maxBytes` (or
 * its head announces more, see `AnnouncedSize`): then it stops reading (the
 * request is paused) and resolves with what was read.
 * Never rejects: a body cut short (the connection or stream reset, the
 * transport's request timeout) leaves it pending, so that no call is made
 * of part of a message; the response's close tells the listener.
 */
export function readRequestBody(
  req: BodySource,
  maxBytes: number,
  announced?: AnnouncedSize,
): Promise<RequestBody> {
  return new Promise((resolve) => readBody(req, maxBytes, resolve, announced));
}

/** A body being read: its own state, kept on its request (the listeners below are shared, no closure per read). */
interface Reading {
  readonly chunks: Buffer[];
  total: number;
  readonly maxBytes: number;
  readonly announced: AnnouncedSize | undefined;
  readonly resolve: (body: RequestBody) => void;
}

const READING = Symbol("body being read");
type Reader = BodySource & { [READING]?: Reading | undefined };

function onData(this: Reader, chunk: Buffer): void {
  const reading = this[READING];
  if (reading === undefined) {
    return;
  }
  const { chunks, announced } = reading;
  chunks.push(chunk);
  const before = reading.total;
  reading.total += chunk.length;
  if (
    reading.total > reading.maxBytes ||
    (announced !== undefined &&
      before < announced.bytes &&
      reading.total >= announced.bytes &&
      announced.tooLarge(chunks.length === 1 ? chunk : Buffer.concat(chunks)))
  ) {
    stopReading(this);
    this.pause();
    reading.resolve({ chunks, total: reading.total, ended: false });
  }
}

// Nothing comes after the end: its listeners go with the request (the hot path removes none).
function onEnd(this: Reader): void {
  const reading = this[READING];
  if (reading === undefined) {
    return;
  }
  this[READING] = undefined;
  if (!cutShort(this)) {
    reading.resolve({ chunks: reading.chunks, total: reading.total, ended: true });
  }
}

function onError(this: Reader): void {
  stopReading(this);
}

function stopReading(req: Reader): void {
  req[READING] = undefined;
  req.off("data", onData);
  req.off("end", onEnd);
  req.off("error", onError);
}

/** `readRequestBody` with a callback: the raw HTTP/2 path makes no promise of it. */
export function readBody(
  req: BodySource,
  maxBytes: number,
  resolve: (body: RequestBody) => void,
  announced?: AnnouncedSize,
): void {
  (req as Reader)[READING] = { chunks: [], total: 0, maxBytes, announced, resolve };
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onError);
}

/**
 * HTTP/2 ends a request's body when its stream closes, reset or not (node's
 * compatibility layer pushes the end either way); HTTP/1.1 never ends a body
 * its connection lost. A stream closed before the answer is a body cut short.
 */
function cutShort(req: BodySource): boolean {
  if ("stream" in req) {
    return req.stream.aborted || req.stream.destroyed;
  }
  return "respond" in req && (req.aborted || req.destroyed);
}

/**
 * Reads no more of a body the answer did not wait for (a refusal given
 * before it ended), once that answer is complete; call it after the answer's
 * `end`. HTTP/2: the stream is reset with NO_ERROR after the whole answer
 * (RFC 9113 §8.1; grpc-go does the same), so the client stops sending and
 * nothing more is buffered, and the connection goes on. Then what arrived
 * before the reset flows away: node destroys a stream closed with NO_ERROR
 * only once its body has been read to the end, so a paused one would stay
 * open on its session for good, and a graceful close of the connection
 * (the client's `session.close()`, the service's stop) would wait for it.
 * `trailers`: the answer ends with trailers, which must go out first.
 * HTTP/1.1: the rest is discarded as it comes, keeping the connection
 * (REQUEST_TIMEOUT_MS bounds it).
 */
export function readNoMore(req: BodySource, trailers: boolean): void {
  const stream = "respond" in req ? req : "stream" in req ? req.stream : undefined;
  const drain = () => {
    if (!req.readableEnded) {
      req.resume();
    }
  };
  if (stream === undefined || stream.closed || stream.state.remoteClose === 1) {
    drain();
    return;
  }
  // Reset now and the trailers would be lost: after they are sent. Drained
  // before the reset and the client could send all the rest.
  const close = () => {
    if (!stream.closed) {
      stream.close(h2constants.NGHTTP2_NO_ERROR);
    }
    drain();
  };
  if (trailers) {
    stream.once("wantTrailers", () => setImmediate(close));
  } else {
    close();
  }
}

/** The body as one buffer (no copy when it came in one chunk). */
export function joined(body: RequestBody): Buffer {
  const [first] = body.chunks;
  return body.chunks.length === 1 && first !== undefined ? first : Buffer.concat(body.chunks);
}

/** The bytes already read, then the rest of the request (when reading stopped at a limit). */
export async function* replay(body: RequestBody, req: BodySource): AsyncIterable<Uint8Array> {
  yield* body.chunks;
  if (!body.ended) {
    for await (const chunk of req) {
      yield chunk as Uint8Array;
    }
  }
}
