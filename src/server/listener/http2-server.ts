// The HTTP/2 side of the dual-protocol listener (src/server/dual-protocol-server.ts).
// Tested by test/integration/transport-limits.test.ts, test/integration/edge-answers.test.ts, test/integration/unread-answers.test.ts, test/unit/server/dual-protocol-server.test.ts.
import {
  createServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Stream,
} from "node:http2";
import type { NodeHandler } from "../../http/node-handler.js";
import { writeStatusAnswer } from "../../status/status-answer.js";
import { settleRequestId } from "../request-id.js";
import { CONNECT_REFUSED, refusalAnswer } from "../transport-answer.js";
import type { UnreadAnswers } from "../unread-answers.js";
import { http2RequestTimeouts } from "./http2-request-timeouts.js";
import { type Http2Sessions, trackHttp2Sessions } from "./http2-sessions.js";
import type { InFlightRequests } from "./in-flight-requests.js";
import { type StreamHandler, takeStreamsFirst } from "./stream-takeover.js";
import type { ReportClientError, TellRefusal } from "./transport-reports.js";

export interface Http2ServerOptions {
  handler: NodeHandler;
  /** Takes the streams it serves straight off the stream (stream-takeover.ts). */
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
 * and held to the request timeout, each stream's answer watched while unread (unread-answers.ts)
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
  // HTTP/1.1's refusal of CONNECT (http1-refusals.ts), where Node would answer a bare 405.
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
