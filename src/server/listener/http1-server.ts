// The HTTP/1.1 side of the dual-protocol listener (src/server/dual-protocol-server.ts):
// node's HTTP/1.1 server with the listener's timeouts and bookkeeping, and
// the transport's own answers in the service's error shape, where node would
// answer by itself with no request id or drop the connection without a word.
// Tested by test/integration/transport-limits.test.ts, test/integration/edge-answers.test.ts, test/integration/graceful-stop.test.ts, test/integration/connection-resets.test.ts, test/unit/server/dual-protocol-server.test.ts.
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { Duplex } from "node:stream";
import type { NodeHandler } from "../../http/node-handler.js";
import { rawHttp1StatusAnswer, writeStatusAnswer } from "../../status/status-answer.js";
import { newRequestId, settleRequestId } from "../request-id.js";
import {
  CONNECT_REFUSED,
  EXPECTATION_FAILED,
  refusalAnswer,
  refusalOfClientError,
} from "../transport-answer.js";
import type { InFlightRequests, UnreadAnswers } from "./in-flight-requests.js";
import type { ReportClientError, TellRefusal } from "./transport-reports.js";

export interface Http1ServerOptions {
  handler: NodeHandler;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  inFlight: InFlightRequests;
  unreadAnswers: UnreadAnswers;
  report: ReportClientError;
  tellRefusal: TellRefusal;
}

/** Node's HTTP/1.1 server, which never listens itself: the listener hands it its sockets. */
export interface Http1Server {
  readonly server: HttpServer;
  /** From now on every answer says `connection: close`: the listener is closing. */
  drain(): void;
}

/**
 * The HTTP/1.1 side of the listener: node's server with the listener's
 * timeouts, each request counted in flight and its answer's deadline
 * watched, and the transport's own refusals (refuseHttp1 below).
 */
export function createHttp1Server(opts: Http1ServerOptions): Http1Server {
  const { inFlight, unreadAnswers } = opts;
  let closing = false;
  // The response in progress on each HTTP/1 keep-alive connection: a parse
  // error in the middle of its bytes cannot be answered any more.
  const responding = new WeakMap<object, ServerResponse>();
  function answered(this: ServerResponse): void {
    if (responding.get(this.req.socket) === this) {
      responding.delete(this.req.socket);
    }
  }
  const h1 = createServer(
    {
      headersTimeout: opts.headersTimeoutMs,
      requestTimeout: opts.requestTimeoutMs,
      keepAliveTimeout: opts.keepAliveTimeoutMs,
      // Node checks the two timeouts above only this often (default 30 s),
      // which would let slow clients hold connections far longer.
      connectionsCheckingInterval: Math.min(1000, opts.headersTimeoutMs),
      // Node would answer an HTTP/1.1 request without Host by itself, a bare
      // 400 with no request id; the handler answers it (see host-guard.ts).
      requireHostHeader: false,
    },
    (req: IncomingMessage, res: ServerResponse) => {
      if (closing) {
        res.setHeader("connection", "close");
      }
      opts.handler(req, res);
      // An answer the handler gave at once, all of it with the kernel (the
      // check lane's): nothing left in flight, waiting or in progress.
      if (res.writableEnded && req.socket.writableLength === 0) {
        return;
      }
      inFlight.track(res);
      unreadAnswers.watch(res);
      responding.set(req.socket, res);
      res.on("close", answered);
    },
  );
  refuseHttp1(h1, { responding, report: opts.report, tellRefusal: opts.tellRefusal });
  return {
    server: h1,
    drain() {
      closing = true;
    },
  };
}

// The transport's own refusals, where node would answer by itself or not at all.

interface Http1RefusalOptions {
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
function refuseHttp1(h1: HttpServer, opts: Http1RefusalOptions): void {
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
