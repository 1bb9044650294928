import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { SERVICE_CREDENTIAL_HEADER, type ServiceCredentialCheck } from "./service-credential.js";

export interface ServiceCredentialInterceptorOptions {
  check: ServiceCredentialCheck;
  /** The services whose calls need it (the `serviceCredential` entries of src/server/api-services.ts). */
  services: readonly DescService[];
}

/**
 * The optional service credential (service-credential.ts) of the services
 * declared to need it (IntrospectToken's), on every protocol: with
 * SERVICE_CREDENTIALS_FILE set, a call without a known service's
 * `X-Service-Credential` is UNAUTHENTICATED. Off, it changes nothing.
 */
export function serviceCredentialInterceptor(
  opts: ServiceCredentialInterceptorOptions,
): Interceptor {
  const services = new Set(opts.services);
  return (next) => async (req) => {
    if (
      services.has(req.service) &&
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
