import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders } from "node:http2";

// A raw HTTP/2 request whose body the test sends piece by piece, never
// ending it unless told: what a client holding a stream open does.

/** What came back on a held stream. */
export interface HeldAnswer {
  /** The response headers (`:status` included). */
  readonly headers: IncomingHttpHeaders;
  /** The trailers; empty when none came. */
  readonly trailers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The RST_STREAM code the stream closed with (0: NO_ERROR, or closed normally). */
  readonly rstCode: number;
}

export interface HeldStream {
  readonly stream: ClientHttp2Stream;
  /** Resolves once the stream closed, with what came back. */
  readonly closed: Promise<HeldAnswer>;
  /** Resolves once the response headers came. */
  readonly answered: Promise<IncomingHttpHeaders>;
}

/** Opens a POST stream on `session` with these headers; the body is the caller's to write. */
export function holdStream(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string>,
): HeldStream {
  const stream = session.request({ ":method": "POST", ":path": path, ...headers });
  // A write after the server reset the stream fails: expected here.
  stream.on("error", () => {});
  let trailers: IncomingHttpHeaders = {};
  const chunks: Buffer[] = [];
  stream.on("trailers", (t) => {
    trailers = t;
  });
  stream.on("data", (c: Buffer) => chunks.push(c));
  const answered = new Promise<IncomingHttpHeaders>((resolve) => stream.once("response", resolve));
  const closed = new Promise<HeldAnswer>((resolve) => {
    stream.once("close", () =>
      answered.then((h) =>
        resolve({
          headers: h,
          trailers,
          body: Buffer.concat(chunks),
          rstCode: stream.rstCode ?? 0,
        }),
      ),
    );
  });
  return { stream, closed, answered };
}

/** A gRPC envelope's 5-byte prefix announcing `length` bytes (uncompressed). */
export function envelopePrefix(length: number): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(length, 1);
  return head;
}

/** Rejects when `promise` has not settled within `ms`, saying what was awaited. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
