import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { loggedMessage } from "../status/server-fault.js";
import { exchangeKey } from "./exchange.js";

/**
 * What the interceptors know of a call and the listener cannot: the error the
 * client gets (for a server-side failure, its cause, which is logged and never
 * sent). It is noted on the call's exchange, which the listener named (RPC and
 * protocol) when it routed the call; the listener's telemetry writes the one log line and count once
 * the answer is sent (answer-telemetry.ts). Request bodies are never logged
 * (they hold signatures).
 */
export function callTelemetryInterceptor(): Interceptor {
  return (next) => async (req) => {
    const exchange = req.contextValues.get(exchangeKey);
    try {
      return await next(req);
    } catch (err) {
      const error = ConnectError.from(err);
      exchange?.recordOutcome(error.code, loggedMessage(error));
      throw error;
    }
  };
}
