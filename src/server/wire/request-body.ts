import type { NodeServerRequest } from "../../http/node-handler.js";

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
 * Never rejects: a reset stream leaves it pending, and the response's close
 * tells the listener.
 */
export function readRequestBody(req: NodeServerRequest, maxBytes: number): Promise<RequestBody> {
  return new Promise((resolve) => {
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
      resolve({ chunks, total, ended: true });
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
  });
}

/** The body as one buffer (no copy when it came in one chunk). */
export function joined(body: RequestBody): Buffer {
  const [first] = body.chunks;
  return body.chunks.length === 1 && first !== undefined ? first : Buffer.concat(body.chunks);
}

/** The bytes already read, then the rest of the request (when reading stopped at a limit). */
export async function* replay(
  body: RequestBody,
  req: NodeServerRequest,
): AsyncIterable<Uint8Array> {
  yield* body.chunks;
  if (!body.ended) {
    for await (const chunk of req) {
      yield chunk as Uint8Array;
    }
  }
}
