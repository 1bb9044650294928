import type { IncomingHttpHeaders } from "node:http";
import type { DescService } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { type OperatorLookup, operatorOfCall } from "./admin-auth-interceptor.js";
import { callerOf } from "./caller-context.js";
import { SERVICE_CREDENTIAL_HEADER, type ServiceCredentialCheck } from "./service-credential.js";
import { serviceCredentialRefusal } from "./service-credential-interceptor.js";

/**
 * Refuses, by its headers and connection alone, a call whose caller does not
 * present the credential its service needs; undefined lets it in. The wire
 * paths ask it before they read any byte of the body, so that nobody without
 * a credential makes the service read (and hold) a message. The interceptors
 * ask the same questions again for the call itself (they also name the
 * operator for the audit line).
 */
export type CallGate = (
  service: DescService,
  headers: IncomingHttpHeaders,
  /** The connection (its verified client certificate names an operator). */
  socket: { remoteAddress?: string | undefined } | undefined,
) => ConnectError | undefined;

export interface CallGateOptions {
  operatorOf: OperatorLookup;
  /** The services only an operator may call (the `operatorOnly` entries of src/server/api-services.ts). */
  adminServices: readonly DescService[];
  /** The service credential check, when SERVICE_CREDENTIALS_FILE is set. */
  serviceCheck?: ServiceCredentialCheck;
  /** The services whose calls need it (the `serviceCredential` entries of src/server/api-services.ts). */
  serviceCredentialServices: readonly DescService[];
}

/** A header's value as WHATWG `Headers.get` gives it to the interceptors (repeats joined). */
function headerOf(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) {
    return null;
  }
  return typeof value === "string" ? value : value.join(", ");
}

export function createCallGate(opts: CallGateOptions): CallGate {
  const adminServices = new Set(opts.adminServices);
  const serviceCredentialServices = new Set(opts.serviceCredentialServices);
  const { serviceCheck } = opts;
  return (service, headers, socket) => {
    if (adminServices.has(service)) {
      try {
        operatorOfCall(
          (name) => headerOf(headers, name),
          callerOf(socket).certificateSubject,
          opts.operatorOf,
        );
      } catch (err) {
        return ConnectError.from(err);
      }
    }
    // Both checks, in the interceptors' order: a service may need both credentials.
    if (
      serviceCheck !== undefined &&
      serviceCredentialServices.has(service) &&
      serviceCheck(headers[SERVICE_CREDENTIAL_HEADER]) === false
    ) {
      return serviceCredentialRefusal();
    }
    return undefined;
  };
}
