import { createServer, type Server } from "node:net";

function listenOnAnyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : 0;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) {
    throw new Error("no free port");
  }
  return port;
}

/**
 * `count` distinct TCP ports on 127.0.0.1 that were free a moment ago. They
 * are held open together while they are picked: one at a time, the system
 * may hand out a port it just took back twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      servers.push(await listenOnAnyPort());
    }
    return servers.map(portOf);
  } finally {
    await Promise.all(
      servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    );
  }
}
