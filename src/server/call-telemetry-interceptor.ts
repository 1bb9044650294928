import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { callProtocol } from "./call-protocol.js";
import { exchangeKey } from "./exchange.js";

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
 * the answer is sent (answer-telemetry.ts). Request bodies are never logged
 * (they hold signatures).
 */
export function callTelemetryInterceptor(): Interceptor {
  return (next) => async (req) => {
    const exchange = req.contextValues.get(exchangeKey);
    exchange?.names(`${req.service.typeName}/${req.method.name}`, callProtocol(req));
    try {
      return await next(req);
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
