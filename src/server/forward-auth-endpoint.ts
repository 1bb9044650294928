import { Code, ConnectError } from "@connectrpc/connect";
import { httpStatusFromCode, scopesOfMask, TOKEN_SCOPES } from "@perps/token-client/protocol";
import {
  SERVICE_CREDENTIAL_HEADER,
  type ServiceCredentialCheck,
} from "../admin-auth/service-credential.js";
import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import { nodeHeaders } from "../http/web-headers.js";
import { errorDetailsJson } from "../status/error-details.js";
import { loggedMessage } from "../status/server-fault.js";
import { allowedFrom, type GrantRefusal } from "../store/token-grants.js";
import type { BearerAuthenticator, BearerIdentity } from "../token/bearer-authenticator.js";
import { bearerTokenOf } from "../token/bearer-header.js";
import { clientErrorOf } from "../token/client-error.js";
import {
  insufficientScope,
  invalidBearer,
  ipNotAllowed,
  missingBearer,
} from "../token/token-errors.js";
import { answersWithoutId, exchangeOf } from "./exchange.js";
import { clientAddress, routeScopes } from "./forward-auth-request.js";
import { refuseWithStatus } from "./status-refusal.js";

export interface ForwardAuthEndpointOptions {
  /** Checks the bearer token of each request. */
  authenticator: BearerAuthenticator;
  /** The calling proxy's optional credential (SERVICE_CREDENTIALS_FILE). Default: off. */
  serviceCheck?: ServiceCredentialCheck;
  /** Told of each live token refused for its grants. Default: nothing. */
  refused?: (reason: GrantRefusal) => void;
}

/** The method label of forward-auth answers in the log and in perps_token_requests_total. */
export const FORWARD_AUTH_METHOD = "forward-auth";

const PROXY_CREDENTIAL_NEEDED =
  'forward-auth needs the calling proxy\'s credential: send "X-Service-Credential: <service secret>" (a service of SERVICE_CREDENTIALS_FILE)';

/** `/auth` or a path under `/auth/` (any query), as edge proxies call it. */
function isForwardAuthPath(req: NodeServerRequest): boolean {
  const path = requestPath(req);
  return path === "/auth" || path.startsWith("/auth/");
}

/**
 * Forward-auth for an edge proxy (nginx `auth_request`, Traefik ForwardAuth,
 * Envoy `ext_authz` in HTTP mode): every method on `/auth` or under `/auth/`.
 * It reads `Authorization`, the client's address (forward-auth-request.ts)
 * and the route's `?scope=`; a body is neither read nor waited for. A live
 * bearer token answers 200 with `X-User-Id` (the user's UUID, lowercase),
 * `X-Token-Id` and `X-Token-Scopes` and an empty body; no bearer token, or
 * one that is not live, 401 with its `WWW-Authenticate` challenge and the
 * usual JSON error body; a live token without a scope the route names
 * (`?scope=`) or used from outside its allow-list, 403; a Redis that cannot
 * answer 503. Returns false for any other path. Answers are logged and
 * counted by the listener's telemetry, as
 * `perps_token_requests_total{method="forward-auth"}` with the answer's code.
 */
export function createForwardAuthEndpoint(opts: ForwardAuthEndpointOptions): Endpoint {
  const { authenticator } = opts;
  /** A check's answer (live or not): it carries the caller's request id only. */
  function checkAnswered(req: NodeServerRequest, res: NodeServerResponse, live: boolean): void {
    const exchange = exchangeOf(req);
    if (exchange !== undefined) {
      exchange.live = live;
      if (answersWithoutId(exchange)) {
        res.removeHeader("x-request-id");
      }
    }
  }

  function allow(req: NodeServerRequest, res: NodeServerResponse, identity: BearerIdentity): void {
    checkAnswered(req, res, true);
    res.writeHead(200, {
      "x-user-id": identity.userId,
      "x-token-id": identity.tokenId,
      "x-token-scopes": identity.grants.scopes.join(","),
      "cache-control": "no-store",
      "content-length": 0,
    });
    res.end();
  }

  function deny(req: NodeServerRequest, res: NodeServerResponse, error: ConnectError): void {
    refuseWithStatus(
      req,
      res,
      {
        status: httpStatusFromCode(error.code),
        code: error.code,
        message: error.rawMessage,
        details: errorDetailsJson(error),
        // The error's own headers: the `WWW-Authenticate` challenge of a 401.
        headers: nodeHeaders(error.metadata, { "cache-control": "no-store" }),
      },
      { headOnly: req.method === "HEAD", logged: loggedMessage(error) },
    );
  }

  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    if (!isForwardAuthPath(req)) {
      return false;
    }
    // 403, not 401: a proxy would hand a 401 to its client as the client's own challenge.
    if (opts.serviceCheck?.(req.headers[SERVICE_CREDENTIAL_HEADER]) === false) {
      deny(req, res, new ConnectError(PROXY_CREDENTIAL_NEEDED, Code.PermissionDenied));
      return true;
    }
    const needed = routeScopes(req.url ?? "");
    if ("unknown" in needed) {
      deny(
        req,
        res,
        new ConnectError(
          `scope: "${needed.unknown}" is not a scope (${TOKEN_SCOPES.join(", ")}): the proxy's route names it`,
          Code.InvalidArgument,
        ),
      );
      return true;
    }
    const token = bearerTokenOf(req.headers.authorization);
    if (token === undefined) {
      checkAnswered(req, res, false);
      deny(req, res, missingBearer());
      return true;
    }
    authenticator.authenticate(token).then(
      (identity) => {
        if (identity === undefined) {
          checkAnswered(req, res, false);
          deny(req, res, invalidBearer());
          return;
        }
        // Refusals of a live token are not checks' answers: each keeps its line and its id.
        if (!allowedFrom(identity.grants, clientAddress(req.headers))) {
          opts.refused?.("ip_not_allowed");
          deny(req, res, ipNotAllowed());
          return;
        }
        const missing = needed.mask & ~identity.grants.scopeMask;
        if (missing !== 0) {
          opts.refused?.("insufficient_scope");
          deny(req, res, insufficientScope(scopesOfMask(missing).join(" ")));
          return;
        }
        authenticator.used(identity);
        allow(req, res, identity);
      },
      (err: unknown) =>
        // Only errors meant for clients are shown (UNAVAILABLE when Redis cannot answer).
        deny(req, res, clientErrorOf(err)),
    );
    return true;
  };
  return { answer, label: FORWARD_AUTH_METHOD };
}
