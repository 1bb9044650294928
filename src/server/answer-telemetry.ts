import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { type ContextValues, createContextValues } from "@connectrpc/connect";
import type { CheckTally } from "../check-lane/check-tally.js";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import type { Logger } from "../log/logger.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import type { CallTracing } from "../tracing/call-tracing.js";
import { attachExchange, Exchange, exchangeKey, exchangeOf } from "./exchange.js";
import { createExchangeReport } from "./exchange-report.js";
import { acceptedRequestId, newRequestId, requestIdKey } from "./request-id.js";
import type { ListenerName } from "./served-service.js";
import type { TransportAnswer } from "./transport-answer.js";
import { failAnswer } from "./wire/answer-failure.js";

// Where a raw stream keeps its exchange: one shared 'close' listener, no closure per stream.
const STREAM_EXCHANGE = Symbol("stream exchange");

export interface AnswerTelemetryOptions {
  logger: Logger;
  metrics: ServiceMetrics;
  /** A server span per exchange, ended with its log line. Default: none (tracing off). */
  tracing?: CallTracing;
  /** Listeners whose callers' trace context is continued (call-tracing.ts). Default: none. */
  traceTrustedListeners?: readonly ListenerName[];
  /** Where checks are counted instead of logged one by one. Default: none (every answer logged). */
  tally?: CheckTally;
}

export interface AnswerTelemetry {
  /**
   * A listener's handler that gives every exchange its request id (in the
   * `x-request-id` response header, whoever answers) and, once the exchange
   * is over, its one log line and count.
   */
  wrap(handler: NodeHandler, listener?: ListenerName): NodeHandler;
  /**
   * Context values of a call, carrying its exchange and request id to the
   * interceptors: the `contextValues` option of the Connect handler and of
   * the REST gateway.
   */
  contextValues(req: NodeServerRequest): ContextValues;
  /** The same, for an exchange the listener made of a raw HTTP/2 stream. */
  exchangeValues(exchange: Exchange): ContextValues;
  /**
   * The exchange of an HTTP/2 stream served without node's request and
   * response objects, a gRPC call of `method`: its request id, and its line
   * and count once the stream closes.
   */
  streamExchange(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    listener: ListenerName | undefined,
    method: string,
  ): Exchange;
  /**
   * The line and count of an answer the transport gave by itself, before any
   * handler (Node's HTTP/1 refusals, the HTTP/2 request timeout).
   */
  transportAnswer(answer: TransportAnswer): void;
}

/**
 * Every answer the service gives is observable, not only the calls that reach
 * the interceptors: plain endpoints (health, metrics, OpenAPI), unknown
 * paths, the REST gateway's refusals of malformed requests and Connect's own
 * refusals (unsupported content type or HTTP method, malformed message) get
 * the same request id, log line and count as a call, here and nowhere else:
 * what the layers that served the request learned (the RPC, the protocol,
 * the code, the cause) is on its exchange. The per-request cost is one small
 * object and one shared 'close' listener.
 */
export function createAnswerTelemetry(opts: AnswerTelemetryOptions): AnswerTelemetry {
  const report = createExchangeReport(opts);
  const { tracing } = opts;
  const trustedListeners = opts.traceTrustedListeners ?? [];
  const trusts = (listener: ListenerName | undefined) =>
    listener !== undefined && trustedListeners.includes(listener);

  /** A call's context values: its exchange and request id. */
  function valuesOf(exchange: Exchange): ContextValues {
    const values = createContextValues();
    values.set(exchangeKey, exchange);
    values.set(requestIdKey, exchange.requestId);
    return values;
  }

  /** A response's exchange as it ended. */
  function tellResponse(exchange: Exchange, res: NodeServerResponse): void {
    if (res.writableEnded) {
      exchange.recordSent(res.statusCode);
    }
    report.exchange(exchange, res.req.headers["content-type"]);
  }

  /** A raw HTTP/2 stream's exchange, once the stream closed: sent if its whole answer was. */
  function tellStream(this: ServerHttp2Stream & { [STREAM_EXCHANGE]?: Exchange }): void {
    const exchange = this[STREAM_EXCHANGE];
    if (exchange === undefined) {
      return;
    }
    const status = this.headersSent && this.writableEnded ? this.sentHeaders[":status"] : undefined;
    if (typeof status === "number") {
      exchange.recordSent(status);
    }
    report.exchange(exchange, undefined);
  }

  // One listener for all responses: the response is `this`, so no closure per request.
  function onClose(this: NodeServerResponse): void {
    const exchange = exchangeOf(this.req);
    if (exchange === undefined) {
      return;
    }
    if (this.writableEnded) {
      tellResponse(exchange, this);
    } else {
      // Abandoned: the layer serving the request learns it from the request's
      // own events, which may come after this one; let it note what it knows.
      setImmediate(tellResponse, exchange, this);
    }
  }

  return {
    wrap(handler, listener) {
      const trusted = trusts(listener);
      return (req, res) => {
        const given = acceptedRequestId(req.headers["x-request-id"]);
        const exchange = new Exchange(given ?? newRequestId(), performance.now());
        exchange.callerId = given !== undefined;
        exchange.listener = listener ?? "";
        attachExchange(req, exchange);
        res.setHeader("x-request-id", exchange.requestId);
        res.on("close", onClose);
        try {
          if (tracing === undefined) {
            handler(req, res);
          } else {
            exchange.trace = tracing.start({
              httpMethod: req.method ?? "",
              httpVersion: req.httpVersionMajor === 2 ? "2" : req.httpVersion,
              traceparent: req.headers.traceparent,
              tracestate: req.headers.tracestate,
              trusted,
              startTime: exchange.started,
            });
            tracing.within(exchange.trace, () => handler(req, res));
          }
        } catch (err) {
          // A handler that throws must not take the process with it.
          failAnswer(res, exchange, err);
        }
      };
    },
    streamExchange(stream, headers, listener, method) {
      const given = acceptedRequestId(headers["x-request-id"]);
      const exchange = new Exchange(given ?? newRequestId(), performance.now());
      exchange.callerId = given !== undefined;
      exchange.nameCall(method, "grpc");
      exchange.listener = listener ?? "";
      if (tracing !== undefined) {
        exchange.trace = tracing.start({
          httpMethod: headers[":method"] ?? "",
          httpVersion: "2",
          traceparent: headers.traceparent,
          tracestate: headers.tracestate,
          trusted: trusts(listener),
          startTime: exchange.started,
        });
      }
      (stream as ServerHttp2Stream & { [STREAM_EXCHANGE]?: Exchange })[STREAM_EXCHANGE] = exchange;
      stream.once("close", tellStream);
      return exchange;
    },
    transportAnswer: report.transportAnswer,
    contextValues(req) {
      const exchange = exchangeOf(req);
      return exchange === undefined ? createContextValues() : valuesOf(exchange);
    },
    exchangeValues: valuesOf,
  };
}
