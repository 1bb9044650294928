import type { IncomingHttpHeaders } from "node:http";
import type { TLSSocket } from "node:tls";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, createContextKey } from "@connectrpc/connect";
import type { NodeServerRequest } from "../http/node-handler.js";
import { bearerTokenOf } from "../token/bearer-header.js";
import { SERVICE_CREDENTIAL_HEADER, type ServiceCredentialCheck } from "./service-credential.js";

// Who is calling, and whether they may: the caller as the connection shows
// them, and the one check of the credentials a call's service needs (an
// operator's, a calling service's), made by headers and connection alone
// before any byte of the body is read.

/** What the connection says of the caller, for the operator check and the audit line. */
export interface Caller {
  /** The peer's IP address, as the socket has it ("" when unknown). */
  address: string;
  /**
   * The subject (CN) of the client certificate the connection presented,
   * when TLS verified it against the listener's client CA; else undefined.
   */
  certificateSubject: string | undefined;
}

/** The caller of a call, set per request from its connection. */
export const callerKey = createContextKey<Caller>(
  { address: "", certificateSubject: undefined },
  { description: "caller" },
);

/** The operator a call was let in as, for the audit line; empty for calls that need none. */
export const operatorKey = createContextKey("", { description: "operator" });

/** The verified client certificate's subject CN, if the connection has one (HTTP/2's socket is a proxy of it). */
function certificateSubjectOf(connection: unknown): string | undefined {
  const socket = connection as Partial<TLSSocket> | undefined;
  if (socket?.authorized !== true || typeof socket.getPeerCertificate !== "function") {
    return undefined;
  }
  const cn: unknown = socket.getPeerCertificate().subject?.CN;
  return typeof cn === "string" && cn !== "" ? cn : undefined;
}

/** What a connection says of its caller (a request's socket, or a raw HTTP/2 stream's session socket). */
export function callerOf(socket: { remoteAddress?: string | undefined } | undefined): Caller {
  return { address: socket?.remoteAddress ?? "", certificateSubject: certificateSubjectOf(socket) };
}

/**
 * The listener's context values of a call, with what the connection says of
 * the caller added: services see no socket.
 */
export function withCaller(
  contextValues: (req: NodeServerRequest) => ContextValues,
): (req: NodeServerRequest) => ContextValues {
  return (req) => {
    const values = contextValues(req);
    values.set(callerKey, callerOf(req.socket));
    return values;
  };
}

/** Says which operator presents this secret, or undefined. */
export type OperatorLookup = (secret: string) => string | undefined;

/**
 * The gate's answer to a call: its refusal, or the operator it is let in as
 * ("" when its service needs no operator), which the wire path carries into
 * the call's context (`operatorKey`) for the audit line.
 */
export type Admission = ConnectError | string;

/**
 * The one check of a call's credentials, by its headers and connection
 * alone. Every way into a call of a service that needs a credential asks it
 * before reading any byte of the body (the wire paths of src/server/wire/ and
 * the check lane), so that nobody without a credential makes the service read
 * (and hold) a message; `servedService` refuses such a service a REST mapping
 * or a streaming method, which would be ways around it.
 */
export type CallGate = (
  service: DescService,
  headers: IncomingHttpHeaders,
  /** The connection (its verified client certificate names an operator). */
  socket: { remoteAddress?: string | undefined } | undefined,
) => Admission;

export interface CallGateOptions {
  operatorOf: OperatorLookup;
  /** The services only an operator may call (the `operatorOnly` entries of src/server/api-services.ts). */
  adminServices: readonly DescService[];
  /** The service credential check, when SERVICE_CREDENTIALS_FILE is set. */
  serviceCheck?: ServiceCredentialCheck;
  /** The services whose calls need it (the `serviceCredential` entries of src/server/api-services.ts). */
  serviceCredentialServices: readonly DescService[];
}

/** A header's value as one string (repeats joined, as WHATWG `Headers.get` gives it). */
function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return value === undefined || typeof value === "string" ? value : value.join(", ");
}

export function createCallGate(opts: CallGateOptions): CallGate {
  const adminServices = new Set(opts.adminServices);
  const serviceCredentialServices = new Set(opts.serviceCredentialServices);
  const { serviceCheck, operatorOf } = opts;
  return (service, headers, socket) => {
    let operator = "";
    if (adminServices.has(service)) {
      const admitted = operatorOfCall(headers, socket, operatorOf);
      if (admitted instanceof ConnectError) {
        return admitted;
      }
      operator = admitted;
    }
    // A service may need both credentials: the operator's is asked first.
    if (
      serviceCheck !== undefined &&
      serviceCredentialServices.has(service) &&
      serviceCheck(headers[SERVICE_CREDENTIAL_HEADER]) === false
    ) {
      return serviceCredentialRefusal();
    }
    return operator;
  };
}

const WHAT_TO_SEND =
  'send "authorization: Bearer <operator secret>" (an operator of ADMIN_CREDENTIALS_FILE; ' +
  "by default the secret in the service's data folder, .data/redis/operator-secret), " +
  "or, where ADMIN_CLIENT_CA_FILE is set, a client certificate it issued";

/**
 * An admin call, whatever its protocol, goes on only without `Origin`
 * (PERMISSION_DENIED) and with a client certificate the listener verified
 * (mutual TLS; its subject's CN is the operator) or a known operator's
 * secret (else UNAUTHENTICATED): the operator's name, or the refusal.
 */
function operatorOfCall(
  headers: IncomingHttpHeaders,
  socket: { remoteAddress?: string | undefined } | undefined,
  operatorOf: OperatorLookup,
): Admission {
  // Only browsers send Origin, and no web page has business with an admin
  // call (a rebound name or a page on an internal host would).
  if (headers.origin !== undefined) {
    return new ConnectError(
      "admin calls are not taken from web pages: this request carries Origin",
      Code.PermissionDenied,
    );
  }
  // Mutual TLS: a client certificate the listener verified names the operator.
  const certificateSubject = certificateSubjectOf(socket);
  if (certificateSubject !== undefined) {
    return certificateSubject;
  }
  const secret = bearerTokenOf(headerOf(headers, "authorization") ?? null);
  if (secret === undefined || secret === "") {
    return new ConnectError(
      `this call needs an operator's credential: ${WHAT_TO_SEND}`,
      Code.Unauthenticated,
    );
  }
  const operator = operatorOf(secret);
  if (operator === undefined) {
    return new ConnectError(
      `the operator credential sent is not accepted: ${WHAT_TO_SEND}`,
      Code.Unauthenticated,
    );
  }
  return operator;
}

/** The refusal of an IntrospectToken call without a listed service's credential. */
export function serviceCredentialRefusal(): ConnectError {
  return new ConnectError(
    'IntrospectToken needs the calling service\'s credential: send "X-Service-Credential: <service secret>" (a service of SERVICE_CREDENTIALS_FILE)',
    Code.Unauthenticated,
  );
}

/** A call's context values with the operator its gate let it in as (none when ""). */
export function admittedAs(values: ContextValues, operator: string): ContextValues {
  if (operator !== "") {
    values.set(operatorKey, operator);
  }
  return values;
}
