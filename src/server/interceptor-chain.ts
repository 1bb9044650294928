import type { Interceptor } from "@connectrpc/connect";
import { loggedMessage } from "../status/server-fault.js";
import { clientErrorOf } from "../token/client-error.js";
import type { CallTracing } from "../tracing/call-tracing.js";
import { validationInterceptor } from "../validation/validation-interceptor.js";
import { exchangeKey } from "./exchange.js";
import { requestIdInterceptor } from "./request-id.js";

export interface InterceptorChainOptions {
  tracing?: CallTracing;
}

/**
 * The interceptors every call goes through, on every protocol and listener,
 * outermost first. Credentials are not among them: the call gate
 * (src/admin-auth/call-gate.ts) has let the call in before its body was read.
 */
export function createInterceptorChain(opts: InterceptorChainOptions): Interceptor[] {
  return [
    ...(opts.tracing === undefined ? [] : [traceContextInterceptor(opts.tracing)]),
    requestIdInterceptor(),
    callOutcomeInterceptor(),
    // Innermost: every protocol's request meets its proto's rules before the service.
    validationInterceptor(),
  ];
}

/**
 * Makes sure a client only ever sees errors we meant it to see, and notes
 * the one it gets on the call's exchange: a store failure becomes its answer
 * (UNAVAILABLE, …) and anything else that is not a ConnectError (a bug, a
 * library error) INTERNAL with a neutral message, the original kept as
 * `cause` (`clientErrorOf`). The exchange, which the listener named (RPC
 * and protocol) when it routed the call, then has what the listener cannot
 * know: the code and the words the client gets, or for a failure of ours
 * its cause, which is logged and never sent. The listener's telemetry writes
 * the one log line and count once the answer is sent (answer-telemetry.ts).
 * Request bodies are never logged (they hold signatures).
 */
export function callOutcomeInterceptor(): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      const error = clientErrorOf(err);
      req.contextValues.get(exchangeKey)?.recordOutcome(error.code, loggedMessage(error));
      throw error;
    }
  };
}

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
