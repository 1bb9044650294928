import type { DescService } from "@bufbuild/protobuf";
import {
  type ConnectRouter,
  createServiceImplSpec,
  type ServiceImpl,
  type ServiceImplSpec,
} from "@connectrpc/connect";

/** The service's two listeners: the public one (clients) and the internal one (services, operators). */
export type ListenerName = "public" | "internal";

/**
 * One RPC service as the app serves it: the one declaration from which the
 * listeners' routes, the REST mapping, the operator and service credential
 * checks, grpc.health.v1 and reflection are derived (src/server/api-services.ts
 * lists them). Adding a service is one more entry there.
 */
export interface ServedService {
  readonly service: DescService;
  /** The listeners it is served on (Connect, gRPC, gRPC-Web). */
  readonly listeners: readonly ListenerName[];
  /** The listeners that also serve its `google.api.http` rules (the REST mapping). */
  readonly rest: readonly ListenerName[];
  /** Only an operator may call it (admin-auth). */
  readonly operatorOnly: boolean;
  /**
   * Its callers present a calling service's credential (X-Service-Credential)
   * when SERVICE_CREDENTIALS_FILE is set (service-credential.ts).
   */
  readonly serviceCredential: boolean;
  /** Registers it on a listener's Connect router. */
  route(router: ConnectRouter): void;
  /** Its implementation, for the REST gateway. */
  spec(): ServiceImplSpec;
}

export interface ServedServiceOptions {
  listeners: readonly ListenerName[];
  /** Default none. */
  rest?: readonly ListenerName[];
  /** Default false. */
  operatorOnly?: boolean;
  /** Default false. */
  serviceCredential?: boolean;
  /** Largest request message, when not the listener's default. */
  readMaxBytes?: number;
}

/** Declares a service served with `impl`; the implementation's type is checked against the service. */
export function servedService<S extends DescService>(
  service: S,
  impl: Partial<ServiceImpl<S>>,
  opts: ServedServiceOptions,
): ServedService {
  if (opts.operatorOnly === true || opts.serviceCredential === true) {
    credentialsAskedByTheGate(service, opts.rest ?? []);
  }
  const routerOptions: Parameters<ConnectRouter["service"]>[2] =
    opts.readMaxBytes === undefined ? {} : { readMaxBytes: opts.readMaxBytes };
  return {
    service,
    listeners: opts.listeners,
    rest: opts.rest ?? [],
    operatorOnly: opts.operatorOnly ?? false,
    serviceCredential: opts.serviceCredential ?? false,
    route: (router) => router.service(service, impl, routerOptions),
    spec: () => createServiceImplSpec(service, impl),
  };
}

/**
 * A service that needs a caller's credential is served only where the call
 * gate (src/admin-auth/call-gate.ts) asks it, before the body is read: the
 * unary calls of the RPC protocols. A REST mapping or a streaming method
 * would be a way in that it does not guard, so either is refused here.
 */
function credentialsAskedByTheGate(service: DescService, rest: readonly ListenerName[]): void {
  if (rest.length > 0) {
    throw new Error(
      `${service.typeName} needs a caller's credential, which REST does not ask: it cannot have a REST mapping`,
    );
  }
  const streaming = service.methods.find((method) => method.methodKind !== "unary");
  if (streaming !== undefined) {
    throw new Error(
      `${service.typeName}/${streaming.name} streams, and the call gate asks credentials of unary calls only`,
    );
  }
}

/** Which services need which caller's credential, as the call gate takes it. */
export interface CredentialedServices {
  /** The `operatorOnly` entries: only an operator may call them. */
  adminServices: readonly DescService[];
  /** The `serviceCredential` entries: a calling service's credential, when those are on. */
  serviceCredentialServices: readonly DescService[];
}

/** The services of `services` that need a caller's credential, by their declaration. */
export function credentialedServices(services: readonly ServedService[]): CredentialedServices {
  return {
    adminServices: services.filter((s) => s.operatorOnly).map((s) => s.service),
    serviceCredentialServices: services.filter((s) => s.serviceCredential).map((s) => s.service),
  };
}

/** The services served on `listener`. */
export function servedOn(
  services: readonly ServedService[],
  listener: ListenerName,
): ServedService[] {
  return services.filter((s) => s.listeners.includes(listener));
}

/** The services whose REST mapping `listener` serves. */
export function restServedOn(
  services: readonly ServedService[],
  listener: ListenerName,
): ServedService[] {
  return services.filter((s) => s.rest.includes(listener));
}
