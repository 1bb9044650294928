import type { AddressInfo, Server } from "node:net";

/** Servers a test listens with on free ports of 127.0.0.1, closed together when it is done. */
export interface ServerPool {
  /** Listens with `server` on a free port; resolves with the port. */
  listen(server: Server): Promise<number>;
  /** Closes every server listened with. */
  closeAll(): Promise<void>;
}

export function serverPool(): ServerPool {
  const servers: Server[] = [];
  return {
    async listen(server) {
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return (server.address() as AddressInfo).port;
    },
    closeAll: () =>
      Promise.all(
        servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      ).then(() => undefined),
  };
}
