import {
  type Http2ServerRequest,
  type Http2ServerResponse,
  constants as h2constants,
  type ServerHttp2Stream,
} from "node:http2";
import { writeStatusAnswer } from "../../status/status-answer.js";
import type { Exchange } from "../exchange.js";
import { newRequestId } from "../request-id.js";
import { REQUEST_TIMEOUT, refusalAnswer } from "../transport-answer.js";
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
  /** `limitRequest` for a stream a stream handler took: its 408 carries the exchange's id (the listener reads it off the stream). */
  limitStream(stream: ServerHttp2Stream, exchange: Exchange): void;
}

export function http2RequestTimeouts(
  requestTimeoutMs: number,
  tellRefusal: TellRefusal,
): Http2RequestTimeouts {
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
    limitStream(stream, exchange) {
      const timer = setTimeout(() => {
        if (stream.destroyed || stream.state.remoteClose === 1) {
          return;
        }
        if (stream.headersSent) {
          stream.close(h2constants.NGHTTP2_CANCEL);
          return;
        }
        writeStatusAnswer(stream, refusalAnswer(REQUEST_TIMEOUT, exchange.requestId), {
          done: () => stream.close(h2constants.NGHTTP2_NO_ERROR),
        });
      }, requestTimeoutMs);
      stream.once("close", () => clearTimeout(timer));
    },
  };
}
