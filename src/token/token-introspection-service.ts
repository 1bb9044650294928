import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type IntrospectTokenResponse,
  IntrospectTokenResponseSchema,
  type TokenIntrospectionService,
} from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import type { BearerAuthenticator, BearerIdentity } from "./bearer-authenticator.js";
import { utcDate } from "./expiry-date.js";

export interface TokenIntrospectionServiceOptions {
  authenticator: BearerAuthenticator;
  /** Told the outcome of every introspection that was answered, with its call's context. Default: nothing. */
  observe?: (active: boolean, context: HandlerContext) => void;
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
  const { authenticator, observe } = opts;
  return {
    async introspectToken(req, context) {
      const identity = await authenticator.authenticate(req.token);
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
  });
}
