import type { Interceptor } from "@connectrpc/connect";
import type { CallTracing } from "../tracing/call-tracing.js";
import { exchangeKey } from "./exchange.js";

/**
 * Runs each call with its exchange's span active, so that the Redis
 * operations it makes become that span's children: a call may start from a
 * stream event, outside the context its listener set. Outermost; only in
 * the chain when tracing is on.
 */
export function traceContextInterceptor(tracing: CallTracing): Interceptor {
  return (next) => (req) => {
    const trace = req.contextValues.get(exchangeKey)?.trace;
    return trace === undefined ? next(req) : tracing.within(trace, () => next(req));
  };
}
