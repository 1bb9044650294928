import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { callProtocol } from "../server/call-protocol.js";
import type { ServiceMetrics } from "./service-metrics.js";

const CREATE = "perps.token.v1.TokenService/CreateToken";
const DELETE = "perps.token.v1.TokenService/DeleteToken";

/** Counts and times every call; counts tokens created and deleted. */
export function metricsInterceptor(metrics: ServiceMetrics): Interceptor {
  return (next) => async (req) => {
    const method = `${req.service.typeName}/${req.method.name}`;
    const protocol = callProtocol(req);
    const stop = metrics.requestDuration.startTimer({ method, protocol });
    let code = "ok";
    try {
      const res = await next(req);
      if (method === CREATE) {
        metrics.tokensCreated.inc();
      } else if (method === DELETE) {
        metrics.tokensDeleted.inc();
      }
      return res;
    } catch (err) {
      code = codeToString(err instanceof ConnectError ? err.code : Code.Unknown);
      throw err;
    } finally {
      stop();
      metrics.requests.inc({ method, protocol, code });
    }
  };
}
