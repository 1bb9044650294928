// TokenService: create and delete, each signed by a registered key of the user
// (createTokenService), and ListTokens, for a bearer token of the user
// (createListTokensHandler), a page at a time, each page resuming where its
// page_token says (encodePageToken, decodePageToken).
//
// What create and delete answer depends on the store's Redis scripts (replays, rates,
// names, revoked keys), so their tests call a running service over a private Redis.
// Tested by test/integration/token-service.test.ts, test/integration/token-service-shape.test.ts, test/integration/token-service-signatures.test.ts.

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  CreateTokenResponseSchema,
  DeleteTokenResponseSchema,
  type ListTokensRequest,
  type ListTokensResponse,
  ListTokensResponseSchema,
  type TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  createTokenMessage,
  DEFAULT_TOKEN_SCOPES,
  deleteTokenMessage,
  generateToken,
  tokenDigest,
  tokenIdOf,
} from "@perps/token-client/protocol";
import type { Ed25519Verifier } from "../crypto/ed25519-verifier.js";
import type { ListPosition } from "../store/list-named-tokens.js";
import type { RequestRefusal } from "../store/signed-request.js";
import type { TokenStore } from "../store/token-store.js";
import { type BearerAuthenticator, createBearerAuthenticator } from "./bearer-authenticator.js";
import { bearerTokenOf } from "./bearer-header.js";
import { expiresAtMs, utcDate } from "./expiry-date.js";
import { checkCreateRequest, checkDeleteRequest, checkTimeWindow } from "./request-rules.js";
import { createSignatureAuthenticator } from "./signature-authenticator.js";
import {
  alreadyCreated,
  invalidBearer,
  missingBearer,
  nameTaken,
  refusalError,
  tokenNotFound,
  tooManyTokens,
} from "./token-errors.js";

export interface TokenServiceOptions {
  store: TokenStore;
  verifier: Ed25519Verifier;
  /** Longest lifetime a token may be created with, in seconds. */
  maxLifetimeSeconds: number;
  /** Server time in Unix milliseconds. Default `Date.now`. */
  now?: () => number;
  /** Users whose registered keys are remembered between calls (see PublicKeyCache). Default 10000. */
  publicKeyCacheUsers?: number;
  /** Checks the bearer token of ListTokens. Default: `createBearerAuthenticator` over `store`, with `now`. */
  authenticator?: BearerAuthenticator;
  /** Told of each token created or deleted (the metrics count them). Default: nobody. */
  observe?: (event: "created" | "deleted") => void;
}

/**
 * TokenService: checks each request in the contract's order (shape, time
 * window, signature, then replay, rate and business rules in the store) and
 * stores tokens through the store; lists a user's named tokens for a bearer
 * token of the user (createListTokensHandler).
 */
export function createTokenService(opts: TokenServiceOptions): ServiceImpl<typeof TokenService> {
  const { store, observe } = opts;
  const now = opts.now ?? Date.now;
  const signatures = createSignatureAuthenticator({
    store,
    verifier: opts.verifier,
    publicKeyCacheUsers: opts.publicKeyCacheUsers ?? 10_000,
  });
  const listTokens = createListTokensHandler({
    store,
    authenticator: opts.authenticator ?? createBearerAuthenticator({ store, now }),
  });

  /** A refusal of the store; a revoked key means the cached keys are stale. */
  function refused(userId: string, outcome: RequestRefusal): never {
    if (outcome.kind === "key-revoked") {
      signatures.forgetKeys(userId);
    }
    throw refusalError(outcome);
  }

  return {
    async createToken(req) {
      const checked = checkCreateRequest(req, { maxLifetimeSeconds: opts.maxLifetimeSeconds });
      const nowMs = now();
      checkTimeWindow(checked.timestamp, nowMs);
      const call = await signatures.signedRequest(
        checked.userId,
        createTokenMessage(checked),
        checked.signature,
      );

      const id = tokenIdOf(call.messageDigest);
      const token = generateToken(call.userId, id);
      const expiresAt = expiresAtMs(nowMs, checked.lifetimeSeconds);
      const outcome = await store.create({
        ...call,
        tokenId: id,
        tokenDigest: tokenDigest(token),
        name: checked.name,
        expiresAtMs: expiresAt,
        scopes: checked.storedScopes,
        allowedIps: [...(checked.allowedIps ?? [])],
        createdAtMs: BigInt(nowMs),
      });
      switch (outcome.kind) {
        case "created":
          observe?.("created");
          return create(CreateTokenResponseSchema, { expiresAt: utcDate(expiresAt), id, token });
        case "already-created":
          throw alreadyCreated(id);
        case "name-taken":
          throw nameTaken();
        case "too-many-tokens":
          throw tooManyTokens(outcome.retryAfterMs, store.maxActivePerUser);
        default:
          return refused(call.userId, outcome);
      }
    },

    async deleteToken(req) {
      const checked = checkDeleteRequest(req);
      checkTimeWindow(checked.timestamp, now());
      const call = await signatures.signedRequest(
        checked.userId,
        deleteTokenMessage(checked),
        checked.signature,
      );
      const outcome = await store.delete({ ...call, tokenId: checked.tokenId });
      switch (outcome.kind) {
        case "deleted":
          observe?.("deleted");
          return create(DeleteTokenResponseSchema);
        case "not-found":
          throw tokenNotFound();
        default:
          return refused(call.userId, outcome);
      }
    },

    listTokens: (req, ctx) => listTokens(req, ctx),
  };
}

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
    authenticator.used(caller);
    const size = req.pageSize === 0 ? DEFAULT_LIST_PAGE_SIZE : req.pageSize;
    const outcome = await store.listNamed(caller.userId, { size, after });
    if (outcome.kind === "rate-limited") {
      throw refusalError(outcome);
    }
    return create(ListTokensResponseSchema, {
      // Every stored field goes out under its own name (a TokenSummary field
      // of the same name), so a field added to the record and to TokenSummary
      // is listed without a change here; the instants go out as text.
      tokens: outcome.tokens.map(
        ({ expiresAtMs, createdAtMs, lastUsedAtMs, scopes, ...stored }) => ({
          ...stored,
          // A token made before scopes existed has the default ones.
          scopes: scopes.length === 0 ? [...DEFAULT_TOKEN_SCOPES] : scopes,
          expiresAt: utcDate(expiresAtMs),
          expiresAtTime: new Date(expiresAtMs).toISOString(),
          ...(createdAtMs > 0n ? { createdAt: new Date(Number(createdAtMs)).toISOString() } : {}),
          // To the minute, as it is recorded: no seconds to suggest more precision.
          ...(lastUsedAtMs === undefined
            ? {}
            : { lastUsedAt: new Date(lastUsedAtMs).toISOString().replace(":00.000Z", ":00Z") }),
        }),
      ),
      nextPageToken: outcome.next === undefined ? "" : encodePageToken(outcome.next),
    });
  };
}

// ListTokens' page_token: where the next page resumes (a token's expiry and
// name), in base64url so that clients treat it as opaque. It carries nothing
// the caller may not see (their own token's name), so it is not sealed: a
// made-up one only moves where the caller's own listing resumes.

/** Versioned text before base64url: `1:<expiresAtMs>:<name>`. */
const PAGE_TOKEN_TEXT = /^1:(\d{1,16}):(.+)$/s;
/** A name of at most 128 code points is at most 512 UTF-8 bytes. */
const MAX_NAME_BYTES = 512;

/** The page_token of the page that resumes after `position`. */
export function encodePageToken(position: ListPosition): string {
  return Buffer.from(`1:${position.expiresAtMs}:${position.name}`, "utf8").toString("base64url");
}

/** The position a page_token stands for, or undefined for anything this service did not issue. */
export function decodePageToken(pageToken: string): ListPosition | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(pageToken)) {
    return undefined;
  }
  const bytes = Buffer.from(pageToken, "base64url");
  const text = bytes.toString("utf8");
  // Not UTF-8 (replacement characters), or not base64url's canonical spelling.
  if (!Buffer.from(text, "utf8").equals(bytes) || bytes.toString("base64url") !== pageToken) {
    return undefined;
  }
  const match = PAGE_TOKEN_TEXT.exec(text);
  const [, ms, name] = match ?? [];
  if (ms === undefined || name === undefined || Buffer.byteLength(name) > MAX_NAME_BYTES) {
    return undefined;
  }
  const expiresAtMs = Number(ms);
  return Number.isSafeInteger(expiresAtMs) ? { expiresAtMs, name } : undefined;
}
