import { createClient } from "@connectrpc/connect";
import { TokenAdminService } from "../gen/perps/token/v1/token_admin_pb.js";
import { fromConnectError } from "../sdk/connect-error-mapping.js";
import { createFetchConnectTransport } from "../sdk/connect-transport.js";
import { operatorAuthorization } from "../sdk/operator-authorization.js";

/** Options of {@link createTokenAdminClient}. */
export interface TokenAdminClientOptions {
  /** Base URL of the internal listener. */
  baseUrl: string;
  /** Deadline of each call in milliseconds. Default 10000. */
  timeoutMs?: number;
  /** The operator's secret, sent with every call. Default none (the service refuses the call). */
  operatorSecret?: string;
}

/** An operator's incident tools on the internal listener; failures are TokenApiErrors, as on the SDK. */
export interface TokenAdminClient {
  /** Resolves with how many live tokens of the user were revoked. */
  revokeUserTokens(userId: string): Promise<number>;
}

/** TokenAdminService over the Connect protocol (HTTP/1.1 and fetch), as the key commands call. */
export function createTokenAdminClient(opts: TokenAdminClientOptions): TokenAdminClient {
  const client = createClient(
    TokenAdminService,
    createFetchConnectTransport({
      baseUrl: opts.baseUrl,
      fetch: (input, init) => globalThis.fetch(input, init),
      interceptors: operatorAuthorization(opts.operatorSecret),
    }),
  );
  const callOptions = { timeoutMs: opts.timeoutMs ?? 10_000 };
  return {
    async revokeUserTokens(userId) {
      try {
        return (await client.revokeUserTokens({ userId }, callOptions)).revokedTokens;
      } catch (err) {
        throw fromConnectError(err);
      }
    },
  };
}
