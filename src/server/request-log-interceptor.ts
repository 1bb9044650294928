import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log/logger.js";
import { callProtocol } from "./call-protocol.js";
import { requestIdKey } from "./request-id.js";

// Codes that point at our side rather than at the caller.
const SERVER_SIDE = new Set([Code.Internal, Code.Unknown, Code.Unavailable, Code.DataLoss]);

/**
 * One log line per call: method, protocol, code and duration. Request bodies
 * are never logged (they hold signatures); the cause of a server-side failure
 * is logged, never sent.
 */
export function requestLogInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const entry = {
      method: `${req.service.typeName}/${req.method.name}`,
      protocol: callProtocol(req),
      requestId: req.contextValues.get(requestIdKey),
    };
    try {
      const res = await next(req);
      logger.info({ ...entry, code: "ok", ms: Math.round(performance.now() - started) }, "request");
      return res;
    } catch (err) {
      const error = ConnectError.from(err);
      const line = {
        ...entry,
        code: Code[error.code],
        ms: Math.round(performance.now() - started),
      };
      if (SERVER_SIDE.has(error.code)) {
        logger.error({ ...line, cause: String(error.cause ?? error.rawMessage) }, "request failed");
      } else {
        logger.info({ ...line, message: error.rawMessage }, "request");
      }
      throw error;
    }
  };
}
