import {
  type Http2ServerRequest,
  type Http2ServerResponse,
  constants as h2constants,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import { writeStatusAnswer } from "../../status/status-answer.js";
import { newRequestId, settleRequestId } from "../request-id.js";
import { REQUEST_TIMEOUT, refusalAnswer } from "../transport-answer.js";
import { type StreamTaker, TAKEN_BY_LANE } from "./stream-takeover.js";
import type { TellRefusal } from "./transport-reports.js";

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
