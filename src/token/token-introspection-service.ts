import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type IntrospectTokenResponse,
  IntrospectTokenResponseSchema,
  type TokenIntrospectionService,
} from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { allowedFrom, type GrantRefusal } from "../store/token-grants.js";
import type { BearerAuthenticator, BearerIdentity } from "./bearer-authenticator.js";
import { utcDate } from "./expiry-date.js";

export interface TokenIntrospectionServiceOptions {
  authenticator: BearerAuthenticator;
  /** Told the outcome of every introspection that was answered, with its call's context. Default: nothing. */
  observe?: (active: boolean, context: HandlerContext) => void;
  /** Told of a live token answered inactive for its grants (its allow-list). Default: nothing. */
  refused?: (reason: GrantRefusal) => void;
}

/**
 * TokenIntrospectionService (internal only), RFC 7662's model: a live token
 * answers who it belongs to; anything else, whatever it is, answers
 * `active: false` and nothing more, never an error. Only the service's own
 * trouble fails the call (Redis unavailable).
 */
export function createTokenIntrospectionService(
  opts: TokenIntrospectionServiceOptions,
): ServiceImpl<typeof TokenIntrospectionService> {
  const { authenticator, observe, refused } = opts;
  return {
    async introspectToken(req, context) {
      const found = await authenticator.authenticate(req.token);
      // A token bound to addresses is live only for a caller inside them (fail closed).
      const allowed = found === undefined || allowedFrom(found.grants, req.clientIp);
      if (!allowed) {
        refused?.("ip_not_allowed");
      }
      const identity = allowed ? found : undefined;
      if (identity !== undefined) {
        authenticator.used(identity);
      }
      observe?.(identity !== undefined, context);
      return introspectionAnswer(identity);
    },
  };
}

/** The answer for a token whose identity this is: `active: false` and nothing more when none. */
export function introspectionAnswer(identity: BearerIdentity | undefined): IntrospectTokenResponse {
  if (identity === undefined) {
    return create(IntrospectTokenResponseSchema, { active: false });
  }
  return create(IntrospectTokenResponseSchema, {
    active: true,
    userId: identity.userId,
    tokenId: identity.tokenId,
    name: identity.name,
    expiresAt: utcDate(identity.expiresAtMs),
    expiresAtMs: BigInt(identity.expiresAtMs),
    scopes: [...identity.grants.scopes],
  });
}
