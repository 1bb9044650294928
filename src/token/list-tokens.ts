import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type ListTokensResponse,
  ListTokensResponseSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import type { NamedTokenSummary, TokenStore } from "../store/token-store.js";
import type { BearerAuthenticator } from "./bearer-authenticator.js";
import { bearerTokenOf } from "./bearer-header.js";
import { utcDate } from "./expiry-date.js";
import { invalidBearer, missingBearer } from "./token-errors.js";

export interface ListTokensOptions {
  store: TokenStore;
  /** Checks the caller's bearer token. */
  authenticator: BearerAuthenticator;
}

/** ListTokens' handler: the request message has no fields, so only the call's headers count. */
export type ListTokensHandler = (ctx: HandlerContext) => Promise<ListTokensResponse>;

/** Names in UTF-8 byte order (not UTF-16 code units: "😀" sorts after "\uFFFD"). */
function byNameBytes(tokens: readonly NamedTokenSummary[]): NamedTokenSummary[] {
  return tokens
    .map((token) => ({ token, bytes: Buffer.from(token.name, "utf8") }))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map(({ token }) => token);
}

/**
 * ListTokens: the caller's `Authorization: Bearer <token>` (header or gRPC
 * metadata) must be a live token of the user, named or session; the answer
 * is that user's live named tokens, ordered by name. No header, or not a
 * Bearer one → missingBearer; any token that is not live → invalidBearer,
 * one answer whatever the reason.
 */
export function createListTokensHandler(opts: ListTokensOptions): ListTokensHandler {
  const { store, authenticator } = opts;
  return async (ctx) => {
    const token = bearerTokenOf(ctx.requestHeader.get("authorization"));
    if (token === undefined) {
      throw missingBearer();
    }
    const caller = await authenticator.authenticate(token);
    if (caller === undefined) {
      throw invalidBearer();
    }
    const named = await store.listNamed(caller.userId);
    return create(ListTokensResponseSchema, {
      tokens: byNameBytes(named).map((t) => ({
        id: t.id,
        name: t.name,
        expiresAt: utcDate(t.expiresAtMs),
      })),
    });
  };
}
