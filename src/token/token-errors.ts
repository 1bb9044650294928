import { Code, ConnectError } from "@connectrpc/connect";
import {
  ErrorInfoSchema,
  LocalizedMessageSchema,
} from "@perps/token-client/contract/google/rpc/error_details_pb.js";
import {
  durationText,
  ERROR_DOMAIN,
  TIMESTAMP_OUTSIDE_WINDOW,
  TOKEN_ALREADY_CREATED,
} from "@perps/token-client/protocol";
import type { RequestRefusal } from "../store/signed-request.js";

/** Whole seconds, at least 1, for a `retry-after` header (the REST gateway forwards it). */
function retryAfter(ms: number): Headers {
  return new Headers({ "retry-after": String(Math.max(1, Math.ceil(ms / 1000))) });
}

// One answer for an unknown user, a user without keys and a wrong signature,
// so that the service does not reveal which users exist.
export const invalidSignature = () => new ConnectError("Invalid signature", Code.Unauthenticated);

/**
 * A timestamp outside the window. The message stays the contract's text;
 * the details say which way the caller's clock is off and by how much, and
 * carry the server's time, so that a bot can correct its clock (a `Date`
 * header is only to the second and not seen by every client library).
 * Telling an unsigned caller the server time costs nothing: it is public.
 */
export function signatureExpired(timestamp: bigint, nowMs: number, toleranceMs: bigint) {
  const offsetMs = timestamp - BigInt(nowMs);
  const clock = offsetMs > 0n ? "ahead" : "behind";
  const serverTime = new Date(nowMs).toISOString();
  return new ConnectError("Signature expired", Code.Unauthenticated, undefined, [
    {
      desc: ErrorInfoSchema,
      value: {
        reason: TIMESTAMP_OUTSIDE_WINDOW,
        domain: ERROR_DOMAIN,
        metadata: {
          serverTimeMs: String(nowMs),
          offsetMs: String(offsetMs),
          clock,
          toleranceMs: String(toleranceMs),
        },
      },
    },
    {
      desc: LocalizedMessageSchema,
      value: {
        locale: "en-US",
        message: `Signature expired: the timestamp is ${durationText(Number(offsetMs))} ${clock === "ahead" ? "ahead of" : "behind"} server time (${serverTime}); within ±${durationText(Number(toleranceMs))} is accepted`,
      },
    },
  ]);
}

export const nameTaken = () =>
  new ConnectError("name: a live token of this user already has this name", Code.AlreadyExists);

/**
 * A replay of an accepted create whose token is still live: names the token
 * (never returns it), so a client whose answer was lost can delete it and
 * free its name. Whoever replays a captured request learns only the id.
 */
export const alreadyCreated = (tokenId: string) =>
  new ConnectError(
    `Signature already used: this request created token ${tokenId}`,
    Code.AlreadyExists,
    undefined,
    [
      {
        desc: ErrorInfoSchema,
        value: { reason: TOKEN_ALREADY_CREATED, domain: ERROR_DOMAIN, metadata: { tokenId } },
      },
    ],
  );

export const tokenNotFound = () => new ConnectError("tokenId: no such token", Code.NotFound);

export const tooManyTokens = (retryAfterMs: number, max: number) =>
  new ConnectError(
    `the user already has ${max} live tokens; delete one or wait for one to expire`,
    Code.ResourceExhausted,
    retryAfter(retryAfterMs),
  );

/** The error for a refusal that create and delete share. */
export function refusalError(refusal: RequestRefusal): ConnectError {
  switch (refusal.kind) {
    case "key-revoked":
      return invalidSignature();
    case "replayed":
      return new ConnectError("Signature already used", Code.Unauthenticated);
    case "rate-limited":
      return new ConnectError(
        "too many token requests for this user; retry later",
        Code.ResourceExhausted,
        retryAfter(refusal.retryAfterMs),
      );
  }
}

/** `WWW-Authenticate` of a request without a bearer token (RFC 6750 §3). */
export const BEARER_CHALLENGE = 'Bearer realm="perps-tokens"';
/** `WWW-Authenticate` of a request whose bearer token is not live (RFC 6750 §3.1). */
export const INVALID_TOKEN_CHALLENGE = 'Bearer realm="perps-tokens", error="invalid_token"';

/** `WWW-Authenticate` of a live token that lacks a scope the route needs (RFC 6750 §3.1). */
export const insufficientScopeChallenge = (scope: string) =>
  `Bearer realm="perps-tokens", error="insufficient_scope", scope="${scope}"`;

/** A live token without a scope the route needs (forward-auth's `?scope=`). */
export const insufficientScope = (scope: string) =>
  new ConnectError(
    `the token lacks the scope "${scope}" this route needs`,
    Code.PermissionDenied,
    new Headers({ "www-authenticate": insufficientScopeChallenge(scope) }),
  );

/**
 * A live token bound to addresses, used from another (or from an address
 * the proxy did not pass: X-Real-IP or X-Forwarded-For).
 */
export const ipNotAllowed = () =>
  new ConnectError(
    "the token is not allowed from this address (its allowedIps)",
    Code.PermissionDenied,
  );

/** No `Authorization: Bearer` credentials. */
export const missingBearer = () =>
  new ConnectError(
    "Bearer token required",
    Code.Unauthenticated,
    new Headers({ "www-authenticate": BEARER_CHALLENGE }),
  );

/**
 * A bearer token that is malformed, unknown, expired or deleted: one answer
 * for all, so that it reveals nothing about which tokens exist.
 */
export const invalidBearer = () =>
  new ConnectError(
    "Invalid token",
    Code.Unauthenticated,
    new Headers({ "www-authenticate": INVALID_TOKEN_CHALLENGE }),
  );
