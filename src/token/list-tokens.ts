import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  type ListTokensRequest,
  type ListTokensResponse,
  ListTokensResponseSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import type { TokenStore } from "../store/token-store.js";
import type { BearerAuthenticator } from "./bearer-authenticator.js";
import { bearerTokenOf } from "./bearer-header.js";
import { utcDate } from "./expiry-date.js";
import { decodePageToken, encodePageToken } from "./page-token.js";
import { invalidBearer, missingBearer, refusalError } from "./token-errors.js";

/** Tokens in a page when the request's page_size is 0 or omitted (the proto caps it at 100). */
export const DEFAULT_LIST_PAGE_SIZE = 50;

export interface ListTokensOptions {
  store: TokenStore;
  /** Checks the caller's bearer token. */
  authenticator: BearerAuthenticator;
}

/** ListTokens' handler: the page asked for in the request, for the user of the call's bearer token. */
export type ListTokensHandler = (
  req: ListTokensRequest,
  ctx: HandlerContext,
) => Promise<ListTokensResponse>;

const invalidPageToken = () =>
  new ConnectError(
    "pageToken: not a page token of this service; send back a nextPageToken as received",
    Code.InvalidArgument,
  );

/**
 * ListTokens: the caller's `Authorization: Bearer <token>` (header or gRPC
 * metadata) must be a live token of the user, named or session; the answer
 * is one page of that user's live named tokens, ordered by expiry then name,
 * and where the next page resumes. No header, or not a Bearer one →
 * missingBearer; any token that is not live → invalidBearer, one answer
 * whatever the reason; over the user's list rate → the rate refusal that
 * create and delete give.
 */
export function createListTokensHandler(opts: ListTokensOptions): ListTokensHandler {
  const { store, authenticator } = opts;
  return async (req, ctx) => {
    const token = bearerTokenOf(ctx.requestHeader.get("authorization"));
    if (token === undefined) {
      throw missingBearer();
    }
    const after = req.pageToken === "" ? undefined : decodePageToken(req.pageToken);
    if (req.pageToken !== "" && after === undefined) {
      throw invalidPageToken();
    }
    const caller = await authenticator.authenticate(token);
    if (caller === undefined) {
      throw invalidBearer();
    }
    const size = req.pageSize === 0 ? DEFAULT_LIST_PAGE_SIZE : req.pageSize;
    const outcome = await store.listNamed(caller.userId, { size, after });
    if (outcome.kind === "rate-limited") {
      throw refusalError(outcome);
    }
    return create(ListTokensResponseSchema, {
      // Every stored field goes out under its own name (a TokenSummary field
      // of the same name), so a field added to the record and to TokenSummary
      // is listed without a change here; the expiry goes out as a date.
      tokens: outcome.tokens.map(({ expiresAtMs, ...stored }) => ({
        ...stored,
        expiresAt: utcDate(expiresAtMs),
      })),
      nextPageToken: outcome.next === undefined ? "" : encodePageToken(outcome.next),
    });
  };
}
