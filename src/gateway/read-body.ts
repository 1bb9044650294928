import type { Readable } from "node:stream";

/** The request body is larger than the limit. */
export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
}

/**
 * Reads a request body of at most `maxBytes`. Rejects with BodyTooLargeError
 * as soon as the limit is passed, without buffering more: the rest of the
 * body is drained and discarded, so the response can still be sent on the
 * same connection. Rejects with the stream's error when the client goes away.
 */
export function readBody(stream: Readable, maxBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      stream.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        cleanup();
        chunks.length = 0;
        // Keep a listener so a late stream error is not unhandled.
        stream.on("error", () => {});
        stream.resume();
        reject(new BodyTooLargeError(`request body exceeds ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => {
      cleanup();
      reject(new Error("request closed before its body was complete"));
    };
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", onError);
    stream.on("close", onClose);
  });
}
