import { createServer } from "node:net";

/** A listener of the service: the variable that sets its port, where it binds. */
export interface ListenAddress {
  /** `PUBLIC_PORT` or `INTERNAL_PORT`. */
  variable: string;
  host: string;
  /** 0 picks a free port, so it is never in use. */
  port: number;
}

/** Whether a plain listen on `address` fails with EADDRINUSE; other failures are left to the real listen. */
function inUse(address: ListenAddress): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "EADDRINUSE"));
    // Never reusePort: the probe must fail where another instance listens,
    // even one that set SO_REUSEPORT (the kernel would let both share the port).
    // Exclusive: its own socket, never a cluster primary's shared handle.
    probe.listen({ port: address.port, host: address.host, exclusive: true }, () =>
      probe.close(() => resolve(false)),
    );
  });
}

/**
 * The listeners whose port something already listens on, checked by listening
 * on each for a moment. Run before anything is started, so that a start that
 * cannot listen stops nothing and starts nothing; the real listen can still
 * lose a race and must handle EADDRINUSE too.
 */
export async function portsInUse(addresses: readonly ListenAddress[]): Promise<ListenAddress[]> {
  const checked = await Promise.all(
    addresses.map(async (address) => ({
      address,
      busy: address.port !== 0 && (await inUse(address)),
    })),
  );
  return checked.filter((c) => c.busy).map((c) => c.address);
}
