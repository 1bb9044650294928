import { STATUS_CODES } from "node:http";
import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { Code, type ContextValues, createContextValues } from "@connectrpc/connect";
import { connectCodeName, restCodeFromHttpStatus } from "@perps/token-client/protocol";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import type { Logger } from "../log/logger.js";
import { createRequestLineWriter } from "../log/request-line.js";
import { createRequestSeries } from "../metrics/request-series.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { isServerFault } from "../status/server-fault.js";
import type { CallTracing } from "../tracing/call-tracing.js";
import { rpcProtocol } from "./call-protocol.js";
import { attachExchange, Exchange, exchangeKey, exchangeOf } from "./exchange.js";
import { requestIdKey, settleRequestId } from "./request-id.js";
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
 * The protocol label of an exchange. A gRPC or gRPC-Web request that named no
 * RPC of ours (an unknown method) is still labelled by its protocol: a client
 * calling methods we do not serve should show as such.
 */
function protocolOf(exchange: Exchange, contentType: string | undefined): string {
  return exchange.method === "http" && contentType?.startsWith("application/grpc")
    ? rpcProtocol(contentType)
    : exchange.protocol;
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
  // The fields of these lines cannot hold a secret (see the call telemetry interceptor).
  const logger = opts.logger.child({}, { redact: [] });
  const requestLine = createRequestLineWriter(logger);
  const seriesOf = createRequestSeries(opts.metrics);
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

  /** The exchange's one log line and count, once it is over. */
  function tell(exchange: Exchange, contentType: string | undefined): void {
    const seconds = (performance.now() - exchange.started) / 1000;
    const answered = exchange.complete;
    const code = answered
      ? (exchange.code ?? restCodeFromHttpStatus(exchange.status))
      : Code.Canceled;
    const protocol = protocolOf(exchange, contentType);
    const series = seriesOf(exchange.method, protocol);
    const metricCode = code === undefined ? "ok" : connectCodeName(code);
    series.duration.observe(seconds);
    series.calls(metricCode).inc();
    if (code === undefined && !exchange.probe && exchange.trace === undefined) {
      // Nearly every line: written without building a log object.
      requestLine({
        method: exchange.method,
        protocol,
        requestId: exchange.requestId,
        code: "ok",
        ms: Math.round(seconds * 1000),
      });
      return;
    }
    const line = {
      method: exchange.method,
      protocol,
      requestId: exchange.requestId,
      code: code === undefined ? "ok" : Code[code],
      ms: Math.round(seconds * 1000),
      ...(exchange.trace === undefined ? {} : { traceId: exchange.trace.traceId }),
    };
    if (exchange.trace !== undefined) {
      tracing?.finish(exchange.trace, {
        method: exchange.method,
        protocol,
        status: answered ? exchange.status : 0,
        code: metricCode,
        grpcStatus: code ?? 0,
        serverFault: code !== undefined && isServerFault(code),
        requestId: exchange.requestId,
      });
    }
    if (!answered) {
      // No answer: the client went away first. Resets and scans make these by the thousand.
      logger.debug({ ...line, message: "the client left before the answer" }, "request abandoned");
    } else if (code === undefined) {
      if (exchange.probe) {
        logger.debug(line, "request");
      } else {
        logger.info(line, "request");
      }
    } else {
      const message = exchange.message || (STATUS_CODES[exchange.status] ?? "");
      // A readiness probe answering 503 is the probe working, not a failure;
      // forward-auth's 503 (method "forward-auth") is one.
      const probe = code === Code.Unavailable && exchange.method === "http" && protocol === "http";
      if (isServerFault(code) && !probe) {
        logger.error({ ...line, cause: message }, "request failed");
      } else {
        logger.info({ ...line, message }, "request");
      }
    }
  }

  /** A response's exchange as it ended. */
  function tellResponse(exchange: Exchange, res: NodeServerResponse): void {
    if (res.writableEnded) {
      exchange.recordSent(res.statusCode);
    }
    tell(exchange, res.req.headers["content-type"]);
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
    tell(exchange, undefined);
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
        const exchange = new Exchange(
          settleRequestId(req.headers["x-request-id"]),
          performance.now(),
        );
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
      const exchange = new Exchange(settleRequestId(headers["x-request-id"]), performance.now());
      exchange.nameCall(method, "grpc");
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
    transportAnswer(answer) {
      // No handler saw the request: no method, and no arrival time to time it from.
      seriesOf("http", "http").calls(connectCodeName(answer.code)).inc();
      logger.info(
        {
          method: "http",
          protocol: answer.protocol,
          requestId: answer.requestId,
          code: Code[answer.code],
          status: answer.status,
          message: answer.reason,
        },
        "request",
      );
    },
    contextValues(req) {
      const exchange = exchangeOf(req);
      return exchange === undefined ? createContextValues() : valuesOf(exchange);
    },
    exchangeValues: valuesOf,
  };
}
