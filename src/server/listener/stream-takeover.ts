import type { Http2Server, IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { Exchange } from "../exchange.js";

/** What a stream handler returns for a stream the check lane took: no exchange (yet). */
export const TAKEN_BY_LANE = Symbol("taken by the check lane");

/** Who took a stream: its exchange, or the check lane. */
export type StreamTaker = Exchange | typeof TAKEN_BY_LANE;

/**
 * Serves an HTTP/2 stream itself, before node's compatibility layer makes a
 * request and a response of it: returns the stream's exchange (or
 * TAKEN_BY_LANE) when it took the stream, or undefined, having read nothing,
 * to leave it to the handler.
 */
export type StreamHandler = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
) => StreamTaker | undefined;

/**
 * Puts `take` before node's compatibility layer: node's own 'stream'
 * listener, which makes a request and a response of every stream, runs only
 * for the streams `take` leaves; `taken` is told of each stream `take` took.
 */
export function takeStreamsFirst(
  h2: Http2Server,
  take: StreamHandler,
  taken: (stream: ServerHttp2Stream, taker: StreamTaker, headers: IncomingHttpHeaders) => void,
): void {
  const compat = h2.listeners("stream");
  if (compat.length !== 1) {
    throw new Error(`expected node's one compatibility 'stream' listener, found ${compat.length}`);
  }
  h2.removeAllListeners("stream");
  h2.on("stream", function (this: unknown, ...args: unknown[]) {
    const [stream, headers] = args as [ServerHttp2Stream, IncomingHttpHeaders];
    const taker = take(stream, headers);
    if (taker === undefined) {
      for (const listener of compat) {
        Reflect.apply(listener, this, args);
      }
    } else {
      taken(stream, taker, headers);
    }
  });
}
