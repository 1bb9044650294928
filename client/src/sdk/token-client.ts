import { Code } from "@connectrpc/connect";
import { createTokenMessage, deleteTokenMessage } from "../protocol/signed-message.js";
import { bearerAuthorization } from "./bearer-authorization.js";
import { createLazyTokenCalls } from "./lazy-token-calls.js";
import { createRestCalls } from "./rest-calls.js";
import { createSignFunction, type Signer, type SignFunction } from "./signer.js";
import { TokenApiError } from "./token-api-error.js";
import type {
  CreatedToken,
  SignedCreateRequest,
  TokenCalls,
  TokenPage,
  TokenSummary,
} from "./token-calls.js";

/**
 * The wire protocol of a client: "rest" (the JSON contract, over fetch),
 * "connect" (Connect protocol, over fetch) or "grpc" (HTTP/2, Node.js only).
 */
export type TokenTransport = "rest" | "connect" | "grpc";

/** Options of {@link createTokenClient}. */
export interface TokenClientOptions {
  /**
   * Base URL of the service's public listener, e.g. `http://127.0.0.1:8080`;
   * a path prefix (`https://api.example.com/tokens`) is kept. Redirects are
   * not followed (a 307 or 308 would resend the signed request elsewhere): an
   * answer that redirects is a TokenApiError UNKNOWN naming it, so give the
   * service's own URL.
   */
  baseUrl: string;
  /** Wire protocol. Default "rest". */
  transport?: TokenTransport;
  /**
   * A private key, or a callback that signs elsewhere (hardware key, remote
   * signer). Needed by createToken and deleteToken only; default none (a
   * client that only lists tokens).
   */
  signer?: Signer;
  /**
   * Clock giving Unix milliseconds for the signed `timestamp`; the service
   * refuses one more than 2 minutes from its own time, so a host with a skewed
   * clock can pass a corrected one. Default `Date.now`.
   */
  now?: () => number;
  /** Deadline of each call in milliseconds. Default 10000. */
  timeoutMs?: number;
  /** The fetch used by "rest" and "connect". Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch;
}

/**
 * The fields of CreateTokenRequest (token.proto) a caller chooses: all but
 * the signature and the timestamp, which the client adds. `userId` is sent
 * and signed exactly as given (not re-cased); `name` left out makes a
 * session token.
 */
type ChosenCreateFields = Omit<SignedCreateRequest, "signature" | "timestamp" | "expiresIn">;

/**
 * Arguments of {@link TokenClient.createToken}: every field of the request a
 * caller chooses, so a field added to CreateTokenRequest is an argument (and
 * sent by every transport) without a change here.
 */
export interface CreateTokenParams extends ChosenCreateFields {
  /** Lifetime in seconds. Default (on the service) 604800; above that, `name` is required. */
  expiresIn?: number | bigint;
  /** Cancels the call. Default none. */
  signal?: AbortSignal;
}

/** Arguments of {@link TokenClient.deleteToken}. */
export interface DeleteTokenParams {
  /** UUID of the user; sent and signed exactly as given (not re-cased). */
  userId: string;
  /** The `id` that createToken returned. */
  tokenId: string;
  /** Cancels the call. Default none. */
  signal?: AbortSignal;
}

/** Options of {@link TokenClient.listTokens}. */
export interface ListTokensOptions {
  /** Most tokens per page asked for, 1 to 100. Default: the service's (50). */
  pageSize?: number;
  /** Cancels the call. Default none. */
  signal?: AbortSignal;
}

/** Options of {@link TokenClient.listTokenPage}. */
export interface ListTokenPageOptions extends ListTokensOptions {
  /** The `nextPageToken` of the previous page. Default none: the first page. */
  pageToken?: string;
}

/** Calls to the token service. Every refusal is a {@link TokenApiError}. */
export interface TokenClient {
  /** The transport this client uses. */
  readonly transport: TokenTransport;
  /** Creates a token; its `token` is returned only this once. */
  createToken(params: CreateTokenParams): Promise<CreatedToken>;
  /** Deletes a token of the user. */
  deleteToken(params: DeleteTokenParams): Promise<void>;
  /**
   * The live named tokens of the user whose live token (named or session)
   * `token` is, every page of them, ordered by expiry (soonest first), then
   * by name (UTF-8 bytes); `[]` when there are none. Session tokens are never
   * listed. Sent as `Authorization: Bearer <token>`, not signed. A bad token
   * (malformed, unknown, expired, deleted) is a TokenApiError
   * UNAUTHENTICATED; each page counts against the user's list rate
   * (RESOURCE_EXHAUSTED with `retryAfterSeconds` over it).
   */
  listTokens(token: string, options?: ListTokensOptions): Promise<TokenSummary[]>;
  /**
   * One page of {@link listTokens}: its tokens and the `nextPageToken` to
   * pass for the next page ("" after the last one). A token live from the
   * first page to the last is in exactly one page.
   */
  listTokenPage(token: string, options?: ListTokenPageOptions): Promise<TokenPage>;
  /** Releases the HTTP/2 connection of "grpc" (nothing to do otherwise); later calls reconnect. */
  close(): void;
}

const DEFAULT_TIMEOUT_MS = 10_000;

// The service's integer range; checked here because a value outside it would
// be signed in one form and sent in another (a JSON number rounds).
function safeInteger(value: number | bigint, field: string): bigint {
  const n = typeof value === "bigint" ? value : Number.isInteger(value) ? BigInt(value) : undefined;
  if (
    n === undefined ||
    n > BigInt(Number.MAX_SAFE_INTEGER) ||
    n < -BigInt(Number.MAX_SAFE_INTEGER)
  ) {
    throw new TokenApiError(Code.InvalidArgument, `${field}: must be an integer within ±(2^53−1)`);
  }
  return n;
}

function openCalls(opts: TokenClientOptions, fetchFn: typeof globalThis.fetch): TokenCalls {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const transport = opts.transport ?? "rest";
  switch (transport) {
    case "rest":
      return createRestCalls({ baseUrl: opts.baseUrl, fetch: fetchFn, timeoutMs });
    // Imported when first used: "rest" needs neither protobuf nor connect.
    case "connect":
      return createLazyTokenCalls(async () => {
        const [{ createRpcCalls }, { openConnectTransport }] = await Promise.all([
          import("./rpc-calls.js"),
          import("./connect-transport.js"),
        ]);
        return createRpcCalls({
          openTransport: () => openConnectTransport({ baseUrl: opts.baseUrl, fetch: fetchFn }),
          timeoutMs,
        });
      });
    case "grpc":
      return createLazyTokenCalls(async () => {
        const [{ createRpcCalls }, { openGrpcTransport }] = await Promise.all([
          import("./rpc-calls.js"),
          import("./grpc-transport.js"),
        ]);
        return createRpcCalls({ openTransport: () => openGrpcTransport(opts.baseUrl), timeoutMs });
      });
    default:
      throw new TypeError(
        `transport: must be "rest", "connect" or "grpc", not ${String(transport)}`,
      );
  }
}

/**
 * A client of the token service: builds the exact signed message of each
 * create and delete, timestamps and signs it, and sends it over the chosen
 * transport; lists a user's named tokens with one of the user's tokens.
 *
 * @example
 * const client = createTokenClient({ baseUrl: "http://127.0.0.1:8080", signer: { privateKey } });
 * const { id, token } = await client.createToken({ userId, name: "my-bot", expiresIn: 3600 });
 * const named = await client.listTokens(token); // [{ id, name: "my-bot", expiresAt }]
 * await client.deleteToken({ userId, tokenId: id });
 */
export function createTokenClient(opts: TokenClientOptions): TokenClient {
  const signer = opts.signer === undefined ? undefined : createSignFunction(opts.signer);
  const sign: SignFunction = async (message) => {
    if (signer === undefined) {
      throw new TypeError("signer: createToken and deleteToken need one (listTokens does not)");
    }
    return signer(message);
  };
  const now = opts.now ?? Date.now;
  // Bound late and to globalThis: a browser's fetch throws "Illegal invocation" when called unbound.
  const fetchFn = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const calls = openCalls(opts, fetchFn);

  function timestamp(): bigint {
    return safeInteger(Math.trunc(now()), "timestamp");
  }

  return {
    transport: opts.transport ?? "rest",
    async createToken(params) {
      const { signal, expiresIn, scopes, allowedIps, ...chosen } = params;
      const fields = {
        ...chosen,
        // An empty list is none: not sent, and the seed's message is signed.
        ...(scopes === undefined || scopes.length === 0 ? {} : { scopes }),
        ...(allowedIps === undefined || allowedIps.length === 0 ? {} : { allowedIps }),
        timestamp: timestamp(),
        expiresIn: expiresIn === undefined ? undefined : safeInteger(expiresIn, "expiresIn"),
      };
      // An omitted name is a slot of its own in the signed text (signed-message.ts).
      const signature = await sign(createTokenMessage({ ...fields, name: chosen.name }));
      return calls.createToken({ ...fields, signature }, { signal });
    },
    async deleteToken(params) {
      const fields = { timestamp: timestamp(), tokenId: params.tokenId, userId: params.userId };
      const signature = await sign(deleteTokenMessage(fields));
      await calls.deleteToken({ ...fields, signature }, { signal: params.signal });
    },
    async listTokens(token, options = {}) {
      const authorization = bearerAuthorization(token);
      const tokens: TokenSummary[] = [];
      let pageToken: string | undefined;
      do {
        const page = await calls.listTokens(
          authorization,
          { pageSize: options.pageSize, pageToken },
          { signal: options.signal },
        );
        tokens.push(...page.tokens);
        if (page.nextPageToken !== "" && page.nextPageToken === pageToken) {
          throw new TokenApiError(Code.Internal, "unexpected response: the same page again");
        }
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      return tokens;
    },
    async listTokenPage(token, options = {}) {
      return calls.listTokens(
        bearerAuthorization(token),
        { pageSize: options.pageSize, pageToken: options.pageToken },
        { signal: options.signal },
      );
    },
    close() {
      calls.close();
    },
  };
}
