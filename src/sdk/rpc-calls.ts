import { createClient, type Transport } from "@connectrpc/connect";
import { TokenService } from "../gen/perps/token/v1/token_pb.js";
import { fromConnectError } from "./connect-error-mapping.js";
import type {
  CallSettings,
  SignedCreateRequest,
  SignedDeleteRequest,
  TokenCalls,
} from "./token-calls.js";

/** A connect Transport and how to release what it holds. */
export interface TransportHandle {
  transport: Transport;
  close(): void;
}

/** Options of {@link createRpcCalls}. */
export interface RpcCallsOptions {
  /** Makes the transport on first use (the gRPC one is loaded lazily). */
  openTransport: () => Promise<TransportHandle>;
  /** Deadline of each call in milliseconds. */
  timeoutMs: number;
}

/** The "connect" and "grpc" transports: TokenService through a connect client. */
export function createRpcCalls(opts: RpcCallsOptions): TokenCalls {
  let handle: Promise<TransportHandle> | undefined;

  async function client() {
    if (handle === undefined) {
      const opening = opts.openTransport();
      handle = opening;
      // A failed open (no HTTP/2 in a browser) is not cached: the error is
      // reported on each call rather than a stale rejection reused.
      opening.catch(() => {
        if (handle === opening) {
          handle = undefined;
        }
      });
    }
    return createClient(TokenService, (await handle).transport);
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
    close() {
      const closing = handle;
      handle = undefined;
      closing?.then(
        (h) => h.close(),
        () => {
          // Never opened: nothing to release.
        },
      );
    },
  };
}
