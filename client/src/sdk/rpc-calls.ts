import { createClient } from "@connectrpc/connect";
import { TokenService } from "../gen/perps/token/v1/token_pb.js";
import { fromConnectError } from "./connect-error-mapping.js";
import { createLazyTransport, type TransportHandle } from "./lazy-transport.js";
import type {
  CallSettings,
  PageRequest,
  SignedCreateRequest,
  SignedDeleteRequest,
  TokenCalls,
} from "./token-calls.js";

/** Options of {@link createRpcCalls}. */
export interface RpcCallsOptions {
  /** Makes the transport on first use (the gRPC one is loaded lazily). */
  openTransport: () => Promise<TransportHandle>;
  /** Deadline of each call in milliseconds. */
  timeoutMs: number;
}

/** The "connect" and "grpc" transports: TokenService through a connect client. */
export function createRpcCalls(opts: RpcCallsOptions): TokenCalls {
  const transport = createLazyTransport(opts.openTransport);

  async function client() {
    return createClient(TokenService, await transport.get());
  }

  return {
    async createToken(req: SignedCreateRequest, settings: CallSettings) {
      try {
        const res = await (await client()).createToken(req, {
          timeoutMs: opts.timeoutMs,
          signal: settings.signal,
        });
        return { id: res.id, token: res.token, expiresAt: res.expiresAt };
      } catch (err) {
        throw fromConnectError(err);
      }
    },
    async deleteToken(req: SignedDeleteRequest, settings: CallSettings) {
      try {
        await (await client()).deleteToken(req, {
          timeoutMs: opts.timeoutMs,
          signal: settings.signal,
        });
      } catch (err) {
        throw fromConnectError(err);
      }
    },
    async listTokens(authorization: string, page: PageRequest, settings: CallSettings) {
      try {
        const res = await (await client()).listTokens(
          { pageSize: page.pageSize ?? 0, pageToken: page.pageToken ?? "" },
          { headers: { authorization }, timeoutMs: opts.timeoutMs, signal: settings.signal },
        );
        return {
          // Every field of the message, as the "rest" transport answers it.
          tokens: res.tokens.map(({ $typeName: _type, $unknown: _unknown, ...summary }) => summary),
          nextPageToken: res.nextPageToken,
        };
      } catch (err) {
        throw fromConnectError(err);
      }
    },
    close() {
      transport.close();
    },
  };
}
