// The HTTP/1.1 transport's own answers, of the dual-protocol listener.
// Tested by test/integration/transport-limits.test.ts, test/integration/edge-answers.test.ts, test/integration/connection-resets.test.ts.
import type { Server as HttpServer, IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { rawHttp1StatusAnswer, writeStatusAnswer } from "../../status/status-answer.js";
import { newRequestId, settleRequestId } from "../request-id.js";
import {
  CONNECT_REFUSED,
  EXPECTATION_FAILED,
  refusalAnswer,
  refusalOfClientError,
} from "../transport-answer.js";
import type { ReportClientError, TellRefusal } from "./transport-reports.js";

export interface Http1RefusalOptions {
  /** The response in progress on each connection (its socket), which a parse error can no longer be answered in the middle of. */
  responding: WeakMap<object, ServerResponse>;
  report: ReportClientError;
  tellRefusal: TellRefusal;
}

/**
 * What node's HTTP/1.1 server would answer by itself, with no request id, or
 * drop without a word, answered in the service's JSON error shape with an
 * `x-request-id` and told: a request it cannot parse, CONNECT, an `Expect`
 * other than 100-continue. A broken connection is only reported.
 */
export function refuseHttp1(h1: HttpServer, opts: Http1RefusalOptions): void {
  const { responding, report, tellRefusal } = opts;
  h1.on("clientError", (err: Error & { code?: string }, socket: Duplex) => {
    const resetByPeer = ["ECONNRESET", "EPIPE", "ECONNABORTED", "ETIMEDOUT"].includes(
      err.code ?? "",
    );
    const inProgress = responding.get(socket);
    const answering = inProgress?.headersSent === true && !inProgress.writableEnded;
    if (resetByPeer || !socket.writable || answering) {
      report(err, "http1");
      socket.destroy();
      return;
    }
    const refusal = refusalOfClientError(err.code);
    const requestId = newRequestId();
    socket.end(rawHttp1StatusAnswer(refusalAnswer(refusal, requestId)), () => socket.destroy());
    tellRefusal(refusal, requestId, err.code ?? "bad request", "http1");
  });
  // Not a proxy: CONNECT is refused. Without this listener Node would close
  // the connection without a word.
  h1.on("connect", (req: IncomingMessage, socket: Duplex) => {
    const requestId = settleRequestId(req.headers["x-request-id"]);
    if (socket.writable) {
      socket.end(rawHttp1StatusAnswer(refusalAnswer(CONNECT_REFUSED, requestId)), () =>
        socket.destroy(),
      );
    } else {
      socket.destroy();
    }
    tellRefusal(CONNECT_REFUSED, requestId, "CONNECT", "http1");
  });
  // Without this listener Node would answer 417 itself, with no request id.
  h1.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) => {
    const requestId = newRequestId();
    writeStatusAnswer(res, refusalAnswer(EXPECTATION_FAILED, requestId));
    tellRefusal(EXPECTATION_FAILED, requestId, "unsupported expectation", "http1");
  });
}
