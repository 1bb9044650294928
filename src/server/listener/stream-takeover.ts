import type { Http2Server, IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { Exchange } from "../exchange.js";

/**
 * Serves an HTTP/2 stream itself, before node's compatibility layer makes a
 * request and a response of it: returns the stream's exchange when it took
 * the stream, or undefined, having read nothing, to leave it to the handler.
 */
export type StreamHandler = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
) => Exchange | undefined;

/**
 * Puts `take` before node's compatibility layer: node's own 'stream'
 * listener, which makes a request and a response of every stream, runs only
 * for the streams `take` leaves; `taken` is told of each stream `take` took.
 */
export function takeStreamsFirst(
  h2: Http2Server,
  take: StreamHandler,
  taken: (stream: ServerHttp2Stream, exchange: Exchange) => void,
): void {
  const compat = h2.listeners("stream");
  if (compat.length !== 1) {
    throw new Error(`expected node's one compatibility 'stream' listener, found ${compat.length}`);
  }
  h2.removeAllListeners("stream");
  h2.on("stream", function (this: unknown, ...args: unknown[]) {
    const [stream, headers] = args as [ServerHttp2Stream, IncomingHttpHeaders];
    const exchange = take(stream, headers);
    if (exchange === undefined) {
      for (const listener of compat) {
        Reflect.apply(listener, this, args);
      }
    } else {
      taken(stream, exchange);
    }
  });
}
