import { createClient } from "@connectrpc/connect";
import { TokenIntrospectionService } from "../gen/perps/token/v1/token_introspection_pb.js";
import { fromConnectError } from "./connect-error-mapping.js";
import { openConnectTransport } from "./connect-transport.js";
import { openGrpcTransport } from "./grpc-transport.js";
import { createLazyTransport, type TransportHandle } from "./lazy-transport.js";

/**
 * The wire protocol of an introspection client: "connect" (Connect protocol,
 * over fetch) or "grpc" (HTTP/2). There is no "rest": the internal listener
 * has no REST mapping of IntrospectToken.
 */
export type IntrospectionTransport = "connect" | "grpc";

/** Options of {@link createIntrospectionClient}. */
export interface IntrospectionClientOptions {
  /**
   * Base URL of the service's INTERNAL listener, e.g. `http://127.0.0.1:9090`
   * (the public listener does not serve IntrospectToken: UNIMPLEMENTED).
   */
  baseUrl: string;
  /**
   * Wire protocol. Default "connect", which holds no connection between calls;
   * "grpc" keeps one HTTP/2 connection open until close().
   */
  transport?: IntrospectionTransport;
  /** Deadline of each call in milliseconds. Default 10000. */
  timeoutMs?: number;
  /** The fetch used by "connect". Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch;
  /**
   * This service's secret, sent as `X-Service-Credential` with every call:
   * needed when the token service runs with SERVICE_CREDENTIALS_FILE.
   * Default: none sent.
   */
  serviceCredential?: string;
}

/** What IntrospectToken says of a token. */
export interface TokenIntrospection {
  /** True only for a live token (not expired, not deleted). */
  active: boolean;
  /** The user's UUID, lowercase; "" when not active. */
  userId: string;
  /** The token's id; "" when not active. */
  tokenId: string;
  /** The token's name: "" for a session token, and when not active. */
  name: string;
  /** UTC date (YYYY-MM-DD) on which the token expires; "" when not active. */
  expiresAt: string;
  /** The exact expiry in Unix ms (a safe integer), to bound any cache kept of the answer; 0 when not active. */
  expiresAtMs: number;
  /** What the token may do (`read`, `trade`, `transfer`, `withdraw`); [] when not active. Refuse a call whose scope is not here. */
  scopes: string[];
}

/** Options of {@link IntrospectionClient.introspectToken}. */
export interface IntrospectTokenOptions {
  /**
   * The address the token's bearer called from. A token bound to an
   * allow-list is active only when this address is in it, and inactive
   * without it. Default none.
   */
  clientIp?: string;
  /** Cancels the call. Default none. */
  signal?: AbortSignal;
}

/** IntrospectToken on the internal listener. Failures are {@link TokenApiError}s. */
export interface IntrospectionClient {
  /** The transport this client uses. */
  readonly transport: IntrospectionTransport;
  /**
   * Whether `token` is live and whose it is. Never fails for a bad token
   * (any string that is not a live token is `active: false`); fails only when
   * the service cannot answer (UNAVAILABLE when Redis is down, or unreachable).
   */
  introspectToken(token: string, options?: IntrospectTokenOptions): Promise<TokenIntrospection>;
  /** Releases the HTTP/2 connection of "grpc" (nothing to do otherwise); later calls reconnect. */
  close(): void;
}

const DEFAULT_TIMEOUT_MS = 10_000;

function openTransport(
  opts: IntrospectionClientOptions,
  transport: IntrospectionTransport,
): () => Promise<TransportHandle> {
  switch (transport) {
    case "connect": {
      // Bound late and to globalThis, as in createTokenClient.
      const fetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
      return () => openConnectTransport({ baseUrl: opts.baseUrl, fetch });
    }
    case "grpc":
      return () => openGrpcTransport(opts.baseUrl);
    default:
      throw new TypeError(
        `transport: must be "connect" or "grpc", not ${String(transport)}` +
          " (IntrospectToken has no REST mapping)",
      );
  }
}

/**
 * A client of IntrospectToken, for internal services that receive
 * `Authorization: Bearer <token>` and must know whether it is live and whose
 * it is. Node.js entry only: it talks to the internal listener.
 *
 * @example
 * const introspection = createIntrospectionClient({ baseUrl: "http://127.0.0.1:9090" });
 * const { active, userId } = await introspection.introspectToken(token);
 */
export function createIntrospectionClient(opts: IntrospectionClientOptions): IntrospectionClient {
  const transport = opts.transport ?? "connect";
  const lazy = createLazyTransport(openTransport(opts, transport));
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const headers =
    opts.serviceCredential === undefined
      ? undefined
      : { "x-service-credential": opts.serviceCredential };
  return {
    transport,
    async introspectToken(token, options = {}) {
      try {
        const client = createClient(TokenIntrospectionService, await lazy.get());
        const res = await client.introspectToken(
          { token, clientIp: options.clientIp ?? "" },
          { timeoutMs, signal: options.signal, ...(headers === undefined ? {} : { headers }) },
        );
        return {
          active: res.active,
          userId: res.userId,
          tokenId: res.tokenId,
          name: res.name,
          expiresAt: res.expiresAt,
          // Unix ms: far inside the safe integers, so the conversion is exact.
          expiresAtMs: Number(res.expiresAtMs),
          scopes: res.scopes,
        };
      } catch (err) {
        throw fromConnectError(err);
      }
    },
    close() {
      lazy.close();
    },
  };
}
