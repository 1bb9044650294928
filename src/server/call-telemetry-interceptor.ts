import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { Logger } from "../log/logger.js";
import { createRequestSeries } from "../metrics/request-series.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { callProtocol } from "./call-protocol.js";
import { exchangeKey } from "./exchange.js";
import { requestIdKey } from "./request-id.js";

export interface CallTelemetryOptions {
  logger: Logger;
  metrics: ServiceMetrics;
}

const CREATE = "perps.token.v1.TokenService/CreateToken";
const DELETE = "perps.token.v1.TokenService/DeleteToken";

// Codes that point at our side rather than at the caller.
export const SERVER_SIDE: ReadonlySet<Code> = new Set([
  Code.Internal,
  Code.Unknown,
  Code.Unavailable,
  Code.DataLoss,
]);

/**
 * What every call leaves behind, worked out once per call: one log line
 * (method, protocol, request id, code, duration) and the metrics (calls by
 * code, latency, tokens created and deleted). Request bodies are never logged
 * (they hold signatures); the cause of a server-side failure is logged, never
 * sent. The call's exchange is marked as told, so the listener does not log
 * or count it a second time (see answer-telemetry.ts).
 */
export function callTelemetryInterceptor(opts: CallTelemetryOptions): Interceptor {
  const { metrics } = opts;
  // The line of a call has fixed fields, none of which can hold a secret, so
  // the redaction safety net (key paths; ~9 µs a line) has nothing to catch.
  const logger = opts.logger.child({}, { redact: [] });
  const seriesOf = createRequestSeries(metrics);
  return (next) => async (req) => {
    const started = performance.now();
    const exchange = req.contextValues.get(exchangeKey);
    if (exchange !== undefined) {
      exchange.told = true;
    }
    const method = `${req.service.typeName}/${req.method.name}`;
    const protocol = callProtocol(req);
    const series = seriesOf(method, protocol);
    const entry = { method, protocol, requestId: req.contextValues.get(requestIdKey) };
    const finish = (code: string) => {
      const seconds = (performance.now() - started) / 1000;
      series.duration.observe(seconds);
      series.calls(code).inc();
      return Math.round(seconds * 1000);
    };
    try {
      const res = await next(req);
      const ms = finish("ok");
      if (method === CREATE) {
        metrics.tokensCreated.inc();
      } else if (method === DELETE) {
        metrics.tokensDeleted.inc();
      }
      logger.info({ ...entry, code: "ok", ms }, "request");
      return res;
    } catch (err) {
      const error = ConnectError.from(err);
      const line = { ...entry, code: Code[error.code], ms: finish(codeToString(error.code)) };
      if (SERVER_SIDE.has(error.code)) {
        logger.error({ ...line, cause: String(error.cause ?? error.rawMessage) }, "request failed");
      } else {
        logger.info({ ...line, message: error.rawMessage }, "request");
      }
      throw error;
    }
  };
}
