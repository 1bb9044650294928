import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import type { TransportHandle } from "./rpc-calls.js";

/** Options of {@link openConnectTransport}. */
export interface ConnectTransportOptions {
  /** Base URL of the listener. */
  baseUrl: string;
  /** The fetch to use. */
  fetch: typeof globalThis.fetch;
}

/**
 * The Connect protocol over fetch (connect-web), so one code path serves
 * browsers and Node. JSON rather than binary: readable in a browser's network
 * panel, and the requests are tiny.
 */
export function createFetchConnectTransport(opts: ConnectTransportOptions): Transport {
  // connect-web reports a fetch that could not connect as UNKNOWN "fetch
  // failed"; the other transports (and gRPC clients generally) say
  // UNAVAILABLE, which is also what tells a caller that a retry may help.
  const fetchFn: typeof globalThis.fetch = async (input, init) => {
    try {
      return await opts.fetch(input, init);
    } catch (err) {
      if (init?.signal?.aborted === true) {
        throw err; // connect turns it into CANCELED or DEADLINE_EXCEEDED itself
      }
      throw new ConnectError(
        `cannot reach ${opts.baseUrl}`,
        Code.Unavailable,
        undefined,
        undefined,
        err,
      );
    }
  };
  return createConnectTransport({ baseUrl: opts.baseUrl, fetch: fetchFn });
}

/** {@link createFetchConnectTransport} as the rpc calls open it. */
export async function openConnectTransport(
  opts: ConnectTransportOptions,
): Promise<TransportHandle> {
  return {
    transport: createFetchConnectTransport(opts),
    close() {
      // fetch manages its own connections.
    },
  };
}
