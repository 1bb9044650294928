// The HTTP/1.1 side of the dual-protocol listener (src/server/dual-protocol-server.ts).
// Tested by test/integration/transport-limits.test.ts, test/integration/edge-answers.test.ts, test/integration/graceful-stop.test.ts, test/unit/server/dual-protocol-server.test.ts.
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { NodeHandler } from "../../http/node-handler.js";
import type { UnreadAnswers } from "../unread-answers.js";
import { refuseHttp1 } from "./http1-refusals.js";
import type { InFlightRequests } from "./in-flight-requests.js";
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
 * watched, and the transport's own refusals (http1-refusals.ts).
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
