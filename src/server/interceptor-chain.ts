import type { DescService } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { adminAuthInterceptor, type OperatorLookup } from "../admin-auth/admin-auth-interceptor.js";
import type { ServiceCredentialCheck } from "../admin-auth/service-credential.js";
import { serviceCredentialInterceptor } from "../admin-auth/service-credential-interceptor.js";
import type { CallTracing } from "../tracing/call-tracing.js";
import { validationInterceptor } from "../validation/validation-interceptor.js";
import { callTelemetryInterceptor } from "./call-telemetry-interceptor.js";
import { errorInterceptor } from "./error-interceptor.js";
import { requestIdInterceptor } from "./request-id.js";
import { traceContextInterceptor } from "./trace-context-interceptor.js";

export interface InterceptorChainOptions {
  operatorOf: OperatorLookup;
  /** The services only an operator may call. */
  adminServices: readonly DescService[];
  /** The service credential check, when SERVICE_CREDENTIALS_FILE is set. */
  serviceCheck?: ServiceCredentialCheck;
  /** The services whose calls need it. */
  serviceCredentialServices: readonly DescService[];
  tracing?: CallTracing;
}

/** The interceptors every call goes through, on every protocol and listener, outermost first. */
export function createInterceptorChain(opts: InterceptorChainOptions): Interceptor[] {
  return [
    ...(opts.tracing === undefined ? [] : [traceContextInterceptor(opts.tracing)]),
    requestIdInterceptor(),
    // The log and the metrics see the error the client gets.
    callTelemetryInterceptor(),
    // Before anything else reads an admin call: refused ones are still logged and counted.
    adminAuthInterceptor({ operatorOf: opts.operatorOf, adminServices: opts.adminServices }),
    // Only when SERVICE_CREDENTIALS_FILE is set: off, no call's header is read for it.
    ...(opts.serviceCheck === undefined
      ? []
      : [
          serviceCredentialInterceptor({
            check: opts.serviceCheck,
            services: opts.serviceCredentialServices,
          }),
        ]),
    errorInterceptor(),
    // Innermost: every protocol's request meets its proto's rules before the service.
    validationInterceptor(),
  ];
}
