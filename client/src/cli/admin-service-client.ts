import type { DescService } from "@bufbuild/protobuf";
import { type CallOptions, type Client, createClient } from "@connectrpc/connect";
import { fromConnectError } from "../sdk/connect-error-mapping.js";
import { createFetchConnectTransport } from "../sdk/connect-transport.js";
import { operatorAuthorization } from "../sdk/operator-authorization.js";

/** Options of an admin service's client on the internal listener. */
export interface AdminClientOptions {
  /** Base URL of the internal listener. */
  baseUrl: string;
  /** Deadline of each call in milliseconds. Default 10000. */
  timeoutMs?: number;
  /** The operator's secret, sent with every call. Default none (the service refuses the call). */
  operatorSecret?: string;
}

/** A Connect client of an admin service, and the options each of its calls takes. */
export interface AdminServiceClient<S extends DescService> {
  client: Client<S>;
  callOptions: CallOptions;
}

/**
 * An admin service over the Connect protocol (HTTP/1.1 and fetch): nothing to
 * keep open, so a one-shot command exits as soon as it is done.
 */
export function createAdminServiceClient<S extends DescService>(
  service: S,
  opts: AdminClientOptions,
): AdminServiceClient<S> {
  const client = createClient(
    service,
    createFetchConnectTransport({
      baseUrl: opts.baseUrl,
      fetch: (input, init) => globalThis.fetch(input, init),
      interceptors: operatorAuthorization(opts.operatorSecret),
    }),
  );
  return { client, callOptions: { timeoutMs: opts.timeoutMs ?? 10_000 } };
}

/** The call's result; its failure a TokenApiError, as on the SDK. */
export async function adminCall<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw fromConnectError(err);
  }
}
