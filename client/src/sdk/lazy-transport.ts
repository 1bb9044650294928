import type { Transport } from "@connectrpc/connect";
import { keptUnlessRejected } from "./kept-promise.js";

/** A connect Transport and how to release what it holds. */
export interface TransportHandle {
  transport: Transport;
  close(): void;
}

/** A transport opened on first use and released by close(); a later use opens a new one. */
export interface LazyTransport {
  get(): Promise<Transport>;
  close(): void;
}

/** Opens `open()` on first use (the gRPC transport is loaded lazily), once until closed. */
export function createLazyTransport(open: () => Promise<TransportHandle>): LazyTransport {
  // A failed open (no HTTP/2 in a browser) is not kept: the error is
  // reported on each call rather than a stale rejection reused.
  const handle = keptUnlessRejected(open);
  return {
    async get() {
      return (await handle.get()).transport;
    },
    close() {
      const closing = handle.current();
      handle.drop();
      closing?.then(
        (h) => h.close(),
        () => {
          // Never opened: nothing to release.
        },
      );
    },
  };
}
