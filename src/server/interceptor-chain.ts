import type { Interceptor } from "@connectrpc/connect";
import type { CallTracing } from "../tracing/call-tracing.js";
import { validationInterceptor } from "../validation/validation-interceptor.js";
import { callTelemetryInterceptor } from "./call-telemetry-interceptor.js";
import { errorInterceptor } from "./error-interceptor.js";
import { requestIdInterceptor } from "./request-id.js";
import { traceContextInterceptor } from "./trace-context-interceptor.js";

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
    // The log and the metrics see the error the client gets.
    callTelemetryInterceptor(),
    errorInterceptor(),
    // Innermost: every protocol's request meets its proto's rules before the service.
    validationInterceptor(),
  ];
}
