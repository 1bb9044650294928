import type { ServerHttp2Stream } from "node:http2";
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
 * Reads the body until it ends, or until it holds more than `maxBytes`: then
 * it stops reading (the request is paused) and resolves with what was read.
 * Never rejects: a body cut short (the connection or stream reset, the
 * transport's request timeout) leaves it pending, so that no call is made
 * of part of a message; the response's close tells the listener.
 */
export function readRequestBody(req: BodySource, maxBytes: number): Promise<RequestBody> {
  return new Promise((resolve) => readBody(req, maxBytes, resolve));
}

/** `readRequestBody` with a callback: the raw HTTP/2 path makes no promise of it. */
export function readBody(
  req: BodySource,
  maxBytes: number,
  resolve: (body: RequestBody) => void,
): void {
  const chunks: Buffer[] = [];
  let total = 0;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    total += chunk.length;
    if (total > maxBytes) {
      stop();
      req.pause();
      resolve({ chunks, total, ended: false });
    }
  };
  const onEnd = () => {
    stop();
    if (!cutShort(req)) {
      resolve({ chunks, total, ended: true });
    }
  };
  const onError = () => stop();
  function stop(): void {
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
  }
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
