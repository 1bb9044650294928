import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import { bearerTokenOf } from "../token/bearer-header.js";
import { callerKey } from "./caller-context.js";

/** The operator a call was authenticated as; empty for calls that need none. */
export const operatorKey = createContextKey("", { description: "operator" });

/** Says which operator presents this secret, or undefined. */
export type OperatorLookup = (secret: string) => string | undefined;

export interface AdminAuthOptions {
  operatorOf: OperatorLookup;
  /** The services only an operator may call (the `operatorOnly` entries of src/server/api-services.ts). */
  adminServices: readonly DescService[];
}

const WHAT_TO_SEND =
  'send "authorization: Bearer <operator secret>" (an operator of ADMIN_CREDENTIALS_FILE; ' +
  "by default the secret in the service's data folder, .data/redis/operator-secret), " +
  "or, where ADMIN_CLIENT_CA_FILE is set, a client certificate it issued";

/**
 * The one check of operators' credentials: a call to an admin service,
 * whatever its protocol, goes on only without `Origin`
 * (PERMISSION_DENIED) and with a client certificate the listener verified
 * (mutual TLS; its subject's CN is the operator) or a known operator's
 * secret (else UNAUTHENTICATED), whose name it then carries (`operatorKey`) into the
 * audit line. Placed after the call telemetry, so that a refusal is logged
 * and counted like any other (never with the secret).
 */
export function adminAuthInterceptor(opts: AdminAuthOptions): Interceptor {
  const adminServices = new Set(opts.adminServices);
  return (next) => async (req) => {
    if (!adminServices.has(req.service)) {
      return next(req);
    }
    const operator = operatorOfCall(
      (name) => req.header.get(name),
      req.contextValues.get(callerKey).certificateSubject,
      opts.operatorOf,
    );
    req.contextValues.set(operatorKey, operator);
    return next(req);
  };
}

/**
 * The operator an admin call comes from, by its headers and its connection's
 * verified client certificate; throws the refusal otherwise. The interceptor
 * asks it, and so does the listener before it reads any of the call's body
 * (src/admin-auth/call-gate.ts).
 */
export function operatorOfCall(
  header: (name: string) => string | null,
  certificateSubject: string | undefined,
  operatorOf: OperatorLookup,
): string {
  // Only browsers send Origin, and no web page has business with an admin
  // call (a rebound name or a page on an internal host would).
  if (header("origin") !== null) {
    throw new ConnectError(
      "admin calls are not taken from web pages: this request carries Origin",
      Code.PermissionDenied,
    );
  }
  // Mutual TLS: a client certificate the listener verified names the operator.
  if (certificateSubject !== undefined) {
    return certificateSubject;
  }
  const secret = bearerTokenOf(header("authorization"));
  if (secret === undefined || secret === "") {
    throw new ConnectError(
      `this call needs an operator's credential: ${WHAT_TO_SEND}`,
      Code.Unauthenticated,
    );
  }
  const operator = operatorOf(secret);
  if (operator === undefined) {
    throw new ConnectError(
      `the operator credential sent is not accepted: ${WHAT_TO_SEND}`,
      Code.Unauthenticated,
    );
  }
  return operator;
}
