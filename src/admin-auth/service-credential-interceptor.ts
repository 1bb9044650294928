import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { SERVICE_CREDENTIAL_HEADER, type ServiceCredentialCheck } from "./service-credential.js";

export interface ServiceCredentialInterceptorOptions {
  check: ServiceCredentialCheck;
}

/**
 * IntrospectToken's optional service credential (service-credential.ts), on
 * every protocol: with SERVICE_CREDENTIALS_FILE set, a call without a known
 * service's `X-Service-Credential` is UNAUTHENTICATED. Off, it changes
 * nothing.
 */
export function serviceCredentialInterceptor(
  opts: ServiceCredentialInterceptorOptions,
): Interceptor {
  return (next) => async (req) => {
    if (
      req.service.typeName === TokenIntrospectionService.typeName &&
      opts.check(req.header.get(SERVICE_CREDENTIAL_HEADER)) === false
    ) {
      throw serviceCredentialRefusal();
    }
    return next(req);
  };
}

/** The refusal of an IntrospectToken call without a listed service's credential. */
export function serviceCredentialRefusal(): ConnectError {
  return new ConnectError(
    'IntrospectToken needs the calling service\'s credential: send "X-Service-Credential: <service secret>" (a service of SERVICE_CREDENTIALS_FILE)',
    Code.Unauthenticated,
  );
}
