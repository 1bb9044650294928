import type {
  CreateTokenRequest,
  TokenSummary as TokenSummaryMessage,
} from "../gen/perps/token/v1/token_pb.js";

/** The fields of a contract message, without protobuf-es' own. */
type ContractFields<M> = Omit<M, "$typeName" | "$unknown">;

/** The keys of M's list (repeated) fields. */
type ListKeys<M> = { [K in keyof M]-?: M[K] extends readonly unknown[] ? K : never }[keyof M];

/** M with its list fields optional: a list left out is an empty one, which protobuf cannot tell apart. */
type ListsOptional<M> = Omit<M, ListKeys<M>> & Partial<Pick<M, ListKeys<M>>>;

/**
 * A create request with its signature, as every transport sends it: every
 * field of CreateTokenRequest (token.proto), so a field added there is sent
 * by every transport without a change here.
 */
export type SignedCreateRequest = Omit<
  ListsOptional<ContractFields<CreateTokenRequest>>,
  "timestamp"
> & {
  timestamp: bigint;
};

/** A delete request with its signature, as every transport sends it. */
export interface SignedDeleteRequest {
  signature: string;
  timestamp: bigint;
  tokenId: string;
  userId: string;
}

/** What a successful create returns. */
export interface CreatedToken {
  /** Token identifier, used to delete it. */
  id: string;
  /** The bearer token. Returned once: the service keeps only its hash. */
  token: string;
  /** UTC date (YYYY-MM-DD) on which the token expires. */
  expiresAt: string;
}

/**
 * One of the user's live named tokens, as listTokens answers it (never the
 * token itself): every field of TokenSummary (token.proto).
 */
export type TokenSummary = ContractFields<TokenSummaryMessage>;

/** Which page of the listing to ask for. */
export interface PageRequest {
  /** Most tokens in the page, 1 to 100; undefined for the service's default (50). */
  pageSize: number | undefined;
  /** The `nextPageToken` of the previous page; undefined for the first page. */
  pageToken: string | undefined;
}

/** One page of the listing. */
export interface TokenPage {
  /** Ordered by expiry (soonest first), then by name (UTF-8 bytes). */
  tokens: TokenSummary[];
  /** Pass as `pageToken` to get the next page; "" when this page is the last. */
  nextPageToken: string;
}

/** Per-call settings every transport honours. */
export interface CallSettings {
  signal: AbortSignal | undefined;
}

/**
 * The wire side of a client, one per transport: sends already signed requests
 * and turns every failure into a TokenApiError.
 */
export interface TokenCalls {
  createToken(req: SignedCreateRequest, settings: CallSettings): Promise<CreatedToken>;
  deleteToken(req: SignedDeleteRequest, settings: CallSettings): Promise<void>;
  /** A page of ListTokens, authenticated by the `authorization` header value given. */
  listTokens(authorization: string, page: PageRequest, settings: CallSettings): Promise<TokenPage>;
  /** Releases connections held between calls; a later call opens new ones. */
  close(): void;
}
