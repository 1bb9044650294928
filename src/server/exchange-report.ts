import { STATUS_CODES } from "node:http";
import { Code } from "@connectrpc/connect";
import { connectCodeName, restCodeFromHttpStatus } from "@perps/token-client/protocol";
import type { CheckAnswer, CheckTally } from "../check-lane/check-tally.js";
import type { Logger } from "../log/logger.js";
import { createRequestLineWriter } from "../log/request-line.js";
import { createRequestSeries, type ServiceMetrics } from "../metrics/service-metrics.js";
import { isServerFault } from "../status/server-fault.js";
import type { CallTracing } from "../tracing/call-tracing.js";
import { rpcProtocol } from "./call-protocol.js";
import type { Exchange } from "./exchange.js";
import { FORWARD_AUTH_METHOD } from "./forward-auth-endpoint.js";
import type { TransportAnswer } from "./transport-answer.js";

export interface ExchangeReportOptions {
  logger: Logger;
  metrics: ServiceMetrics;
  /** Ends an exchange's server span with its line. Default: none (tracing off). */
  tracing?: CallTracing;
  /** Where checks are counted instead of logged one by one. Default: none (every answer logged). */
  tally?: CheckTally;
}

/**
 * Whether an answer says a token is live or not (docs/design-choices.md:
 * counted, not logged one by one): IntrospectToken's answer, and `/auth`'s
 * 200 or 401. Refusals and failures are not.
 */
function checkAnswer(exchange: Exchange, code: Code | undefined): CheckAnswer | undefined {
  if (!exchange.complete) {
    return undefined;
  }
  if (exchange.method === FORWARD_AUTH_METHOD) {
    return code === undefined ? "live" : code === Code.Unauthenticated ? "notLive" : undefined;
  }
  return code === undefined && exchange.live !== undefined
    ? exchange.live
      ? "live"
      : "notLive"
    : undefined;
}

/** The one log line, count and span end of each answer the service gives. */
export interface ExchangeReport {
  /** An exchange's, once it is over; `contentType` is its request's. */
  exchange(exchange: Exchange, contentType: string | undefined): void;
  /** An answer the transport gave by itself, before any handler (no exchange). */
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
 * Reports what an exchange's writers recorded: the request count and
 * duration by method, protocol and code, the server span's end, and one log
 * line, whose level says whose failure it was (`isServerFault`).
 */
export function createExchangeReport(opts: ExchangeReportOptions): ExchangeReport {
  // The fields of these lines cannot hold a secret (see the call outcome interceptor, interceptor-chain.ts).
  const logger = opts.logger.child({}, { redact: [] });
  const requestLine = createRequestLineWriter(logger);
  const seriesOf = createRequestSeries(opts.metrics);
  const { tracing, tally } = opts;

  function finishTrace(
    exchange: Exchange,
    protocol: string,
    code: Code | undefined,
    metricCode: string,
  ): void {
    if (exchange.trace === undefined) {
      return;
    }
    tracing?.finish(exchange.trace, {
      method: exchange.method,
      protocol,
      status: exchange.complete ? exchange.status : 0,
      code: metricCode,
      grpcStatus: code ?? 0,
      serverFault: code !== undefined && isServerFault(code),
      requestId: exchange.requestId,
    });
  }

  /** The line of an exchange that is not a plain success (or that is traced). */
  function logLine(exchange: Exchange, protocol: string, code: Code | undefined, ms: number) {
    const line = {
      method: exchange.method,
      protocol,
      requestId: exchange.requestId,
      code: code === undefined ? "ok" : Code[code],
      ms,
      ...(exchange.trace === undefined ? {} : { traceId: exchange.trace.traceId }),
    };
    if (!exchange.complete) {
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
      // any other 503 (forward-auth's, a call's) is one.
      const probeWorking = code === Code.Unavailable && exchange.probe;
      if (isServerFault(code) && !probeWorking) {
        logger.error({ ...line, cause: message }, "request failed");
      } else {
        logger.info({ ...line, message }, "request");
      }
    }
  }

  return {
    exchange(exchange, contentType) {
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
      const ms = Math.round(seconds * 1000);
      const check = tally === undefined ? undefined : checkAnswer(exchange, code);
      if (check !== undefined && tally !== undefined) {
        tally.summarize(exchange.listener, check, seconds);
        if (exchange.trace !== undefined) {
          finishTrace(exchange, protocol, code, metricCode);
        }
        if (tally.lineEach) {
          logger.debug(
            {
              method: exchange.method,
              protocol,
              requestId: exchange.requestId,
              code: code === undefined ? "ok" : Code[code],
              ms,
            },
            "request",
          );
        }
        return;
      }
      if (code === undefined && !exchange.probe && exchange.trace === undefined) {
        // Nearly every line: written without building a log object.
        requestLine({
          method: exchange.method,
          protocol,
          requestId: exchange.requestId,
          code: "ok",
          ms,
        });
        return;
      }
      if (exchange.trace !== undefined) {
        finishTrace(exchange, protocol, code, metricCode);
      }
      logLine(exchange, protocol, code, ms);
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
  };
}
