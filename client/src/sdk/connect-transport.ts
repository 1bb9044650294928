import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import type { TransportHandle } from "./lazy-transport.js";
import { REDIRECT_MODE, redirectRefusal } from "./redirect-refusal.js";

/** Options of {@link openConnectTransport}. */
export interface ConnectTransportOptions {
  /** Base URL of the listener. */
  baseUrl: string;
  /** The fetch to use. */
  fetch: typeof globalThis.fetch;
  /** Run on every call (e.g. an operator's credential). Default none. */
  interceptors?: Interceptor[];
}

function urlOf(input: Parameters<typeof globalThis.fetch>[0]): string {
  if (typeof input === "string") {
    return input;
  }
  return input instanceof URL ? input.href : input.url;
}

/**
 * The Connect protocol over fetch (connect-web), so one code path serves
 * browsers and Node. JSON rather than binary: readable in a browser's network
 * panel, and the requests are tiny. Redirects are not followed: a redirect is
 * an UNKNOWN error saying so (see redirect-refusal.ts).
 */
export function createFetchConnectTransport(opts: ConnectTransportOptions): Transport {
  // connect-web reports a fetch that could not connect as UNKNOWN "fetch
  // failed"; the other transports (and gRPC clients generally) say
  // UNAVAILABLE, which is also what tells a caller that a retry may help.
  const fetchFn: typeof globalThis.fetch = async (input, init) => {
    let res: Response;
    try {
      // connect-web asks for redirect "error", which fetch reports as a
      // failure to connect; "manual" lets the redirect be named as such.
      res = await opts.fetch(input, { ...init, redirect: REDIRECT_MODE });
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
    const redirect = redirectRefusal(res, urlOf(input));
    if (redirect !== undefined) {
      await res.body?.cancel();
      throw new ConnectError(redirect, Code.Unknown);
    }
    return res;
  };
  return createConnectTransport({
    baseUrl: opts.baseUrl,
    fetch: fetchFn,
    ...(opts.interceptors === undefined ? {} : { interceptors: opts.interceptors }),
  });
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
