import type { Transport } from "@connectrpc/connect";

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
  let handle: Promise<TransportHandle> | undefined;
  return {
    async get() {
      if (handle === undefined) {
        const opening = open();
        handle = opening;
        // A failed open (no HTTP/2 in a browser) is not cached: the error is
        // reported on each call rather than a stale rejection reused.
        opening.catch(() => {
          if (handle === opening) {
            handle = undefined;
          }
        });
      }
      return (await handle).transport;
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
