// The HTTP/2 side of the dual-protocol listener (src/server/dual-protocol-server.ts):
// node's HTTP/2 server with the listener's settings; the stream takeover,
// which lets a stream handler (the check lane's, the raw gRPC path) serve a
// stream before node's compatibility layer makes a request and a response of
// it; and the request timeout HTTP/2 lacks, for streams of either kind. Each
// stream's bookkeeping (in flight, unread answer, session activity, request
// timer) starts on 'stream' and ends in one shared 'close' listener.
// Tested by test/integration/transport-limits.test.ts, test/integration/edge-answers.test.ts, test/integration/unread-answers.test.ts, test/unit/server/dual-protocol-server.test.ts.
import {
  createServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  constants as h2constants,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import type { NodeHandler } from "../../http/node-handler.js";
import { writeStatusAnswer } from "../../status/status-answer.js";
import type { Exchange } from "../exchange.js";
import { newRequestId, settleRequestId } from "../request-id.js";
import { CONNECT_REFUSED, REQUEST_TIMEOUT, refusalAnswer } from "../transport-answer.js";
import { type Http2Sessions, trackHttp2Sessions } from "./http2-sessions.js";
import type { InFlightRequests, UnreadAnswers } from "./in-flight-requests.js";
import type { ReportClientError, TellRefusal } from "./transport-reports.js";

export interface Http2ServerOptions {
  handler: NodeHandler;
  /** Takes the streams it serves straight off the stream (takeStreamsFirst below). */
  streamHandler: StreamHandler | undefined;
  maxConcurrentStreams: number;
  /** An idle session is closed after this time. */
  idleTimeoutMs: number;
  requestTimeoutMs: number;
  inFlight: InFlightRequests;
  unreadAnswers: UnreadAnswers;
  report: ReportClientError;
  tellRefusal: TellRefusal;
}

/** Node's HTTP/2 server, which never listens itself (the listener hands it its sockets), and its sessions. */
export interface Http2Protocol {
  readonly server: Http2Server;
  readonly sessions: Http2Sessions;
}

/**
 * The HTTP/2 side of the listener: node's server with the listener's
 * settings, each stream counted in flight
 * and held to the request timeout, each stream's answer watched while unread (in-flight-requests.ts)
 * and its errors reported, CONNECT refused.
 */
export function createHttp2Server(opts: Http2ServerOptions): Http2Protocol {
  const { inFlight, unreadAnswers, report } = opts;
  const h2 = createServer(
    { settings: { maxConcurrentStreams: opts.maxConcurrentStreams } },
    opts.handler,
  );
  h2.setTimeout(opts.idleTimeoutMs);
  const timeouts = http2RequestTimeouts(opts.requestTimeoutMs, opts.tellRefusal);
  if (opts.streamHandler !== undefined) {
    takeStreamsFirst(h2, opts.streamHandler, (stream, taker, headers) =>
      timeouts.limitStream(stream, taker, headers),
    );
  }
  const sessions = trackHttp2Sessions(h2);
  // Node has already destroyed the session or stream; this only reports it.
  h2.on("sessionError", (err: Error) => report(err, "http2-session"));
  const reportStreamError = (err: Error) => report(err, "http2-stream");
  // Every stream's bookkeeping ends in one shared 'close' listener: no closure per stream.
  function streamClosed(this: ServerHttp2Stream): void {
    inFlight.closed();
    unreadAnswers.forget(this);
    sessions.streamClosed(this);
    timeouts.released(this);
  }
  h2.on("stream", (stream: ServerHttp2Stream) => {
    stream.on("error", reportStreamError);
    inFlight.opened();
    unreadAnswers.opened(stream);
    sessions.streamOpened(stream);
    stream.on("close", streamClosed);
  });
  // HTTP/1.1's refusal of CONNECT (refuseHttp1 in http1-server.ts), where Node
  // would answer a bare 405.
  h2.on("connect", (req: Http2ServerRequest, res: Http2ServerResponse) => {
    const requestId = settleRequestId(req.headers["x-request-id"]);
    writeStatusAnswer(res, refusalAnswer(CONNECT_REFUSED, requestId));
    opts.tellRefusal(CONNECT_REFUSED, requestId, "CONNECT", "http2");
  });
  // In flight already, as its stream.
  h2.on("request", (req: Http2ServerRequest, res: Http2ServerResponse) =>
    timeouts.limitRequest(req, res),
  );
  return { server: h2, sessions };
}

// The stream takeover: a stream handler serves the streams it takes before
// node's compatibility layer sees them.

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

// The request timeout HTTP/2 lacks, for the streams of both kinds.

/**
 * HTTP/2 has no request timeout of its own: a stream whose body never ends
 * would live as long as its session. A stream still receiving its request
 * after the request timeout is answered 408 (if nothing was answered yet)
 * and reset, as HTTP/1.1's requestTimeout closes the connection.
 */
export interface Http2RequestTimeouts {
  /** Bounds the time to receive a request node's compatibility layer made of a stream. */
  limitRequest(req: Http2ServerRequest, res: Http2ServerResponse): void;
  /**
   * `limitRequest` for a stream a stream handler took: its 408 carries the
   * exchange's id, whose line tells it; one the check lane took is told
   * here, with the caller's id or a new one.
   */
  limitStream(stream: ServerHttp2Stream, taker: StreamTaker, headers: IncomingHttpHeaders): void;
  /** Ends `limitStream`'s bound of a stream that closed (its caller hears the close). */
  released(stream: ServerHttp2Stream): void;
}

const TIMER = Symbol("request timer");
type TimedStream = ServerHttp2Stream & { [TIMER]?: NodeJS.Timeout };

export function http2RequestTimeouts(
  requestTimeoutMs: number,
  tellRefusal: TellRefusal,
): Http2RequestTimeouts {
  function streamTimedOut(
    stream: ServerHttp2Stream,
    taker: StreamTaker,
    headers: IncomingHttpHeaders,
  ): void {
    if (stream.destroyed || stream.state.remoteClose === 1) {
      return;
    }
    if (stream.headersSent) {
      stream.close(h2constants.NGHTTP2_CANCEL);
      return;
    }
    const requestId =
      taker === TAKEN_BY_LANE ? settleRequestId(headers["x-request-id"]) : taker.requestId;
    writeStatusAnswer(stream, refusalAnswer(REQUEST_TIMEOUT, requestId), {
      done: () => stream.close(h2constants.NGHTTP2_NO_ERROR),
    });
    if (taker === TAKEN_BY_LANE) {
      tellRefusal(REQUEST_TIMEOUT, requestId, "ERR_HTTP2_REQUEST_TIMEOUT", "http2");
    }
  }

  return {
    limitRequest(req, res) {
      const { stream } = req;
      const timer = setTimeout(() => {
        if (stream.destroyed || stream.state.remoteClose === 1) {
          return; // The whole request arrived in time.
        }
        if (res.headersSent) {
          // Answered already (the handler did not wait for the body), or cut mid-answer.
          stream.close(
            res.writableEnded ? h2constants.NGHTTP2_NO_ERROR : h2constants.NGHTTP2_CANCEL,
          );
          return;
        }
        // The handler has the request: where it gave the exchange an id (the
        // app's telemetry does), the exchange's own line and count tell this
        // answer; only an exchange nobody tells is reported here.
        const given = res.getHeader("x-request-id");
        const requestId = typeof given === "string" ? given : newRequestId();
        // NO_ERROR after a whole answer: stop sending, the request is refused.
        writeStatusAnswer(res, refusalAnswer(REQUEST_TIMEOUT, requestId), {
          done: () => stream.close(h2constants.NGHTTP2_NO_ERROR),
        });
        if (given === undefined) {
          tellRefusal(REQUEST_TIMEOUT, requestId, "ERR_HTTP2_REQUEST_TIMEOUT", "http2");
        }
      }, requestTimeoutMs);
      stream.once("close", () => clearTimeout(timer));
    },
    limitStream(stream, taker, headers) {
      // No closure per stream: the check lane's streams come by the thousand a second.
      (stream as TimedStream)[TIMER] = setTimeout(
        streamTimedOut,
        requestTimeoutMs,
        stream,
        taker,
        headers,
      );
    },
    released(stream) {
      clearTimeout((stream as TimedStream)[TIMER]);
    },
  };
}
