import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { callProtocol } from "./call-protocol.js";
import { exchangeKey } from "./exchange.js";

export interface CallTelemetryOptions {
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
 * What the interceptors know of a call and the listener cannot: the RPC and
 * protocol, and the error the client gets (for a server-side failure, its
 * cause, which is logged and never sent). They are noted on the call's
 * exchange; the listener's telemetry writes the one log line and count once
 * the answer is sent (answer-telemetry.ts). Tokens created and deleted are
 * counted here. Request bodies are never logged (they hold signatures).
 */
export function callTelemetryInterceptor(opts: CallTelemetryOptions): Interceptor {
  const { metrics } = opts;
  return (next) => async (req) => {
    const exchange = req.contextValues.get(exchangeKey);
    const method = `${req.service.typeName}/${req.method.name}`;
    exchange?.names(method, callProtocol(req));
    try {
      const res = await next(req);
      if (method === CREATE) {
        metrics.tokensCreated.inc();
      } else if (method === DELETE) {
        metrics.tokensDeleted.inc();
      }
      return res;
    } catch (err) {
      const error = ConnectError.from(err);
      exchange?.answers(
        error.code,
        SERVER_SIDE.has(error.code) ? String(error.cause ?? error.rawMessage) : error.rawMessage,
      );
      throw error;
    }
  };
}
