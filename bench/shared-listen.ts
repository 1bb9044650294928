import type { Server as HttpServer } from "node:http";
import type { Http2Server } from "node:http2";
import type { ListenOptions } from "node:net";

/**
 * Listens on 127.0.0.1:`port` with SO_REUSEPORT, as each of the service's
 * workers does, so that a floor started as several processes on the same
 * port is served the way the service is: the kernel spreads connections over
 * the processes. Port 0: any free port.
 * Resolves with the port listened on.
 */
export function listenShared(server: HttpServer | Http2Server, port: number): Promise<number> {
  const options: ListenOptions =
    port === 0
      ? { port, host: "127.0.0.1" }
      : { port, host: "127.0.0.1", exclusive: true, reusePort: true };
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options, () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    });
  });
}

/** The port a floor was told to listen on (PUBLIC_PORT or INTERNAL_PORT, set by service-process.ts), else 0. */
export const portFromEnv = (value: string | undefined): number =>
  value === undefined ? 0 : Number(value);

/**
 * A floor with one listener, started as the service is: listens shared on
 * PUBLIC_PORT, writes the "listening" line service-process.ts waits for
 * (the one port as both), and on SIGTERM stops listening and runs `stop`.
 */
export async function listenAsFloor(
  server: HttpServer | Http2Server,
  stop: () => void,
): Promise<void> {
  const port = await listenShared(server, portFromEnv(process.env.PUBLIC_PORT));
  process.stdout.write(
    `${JSON.stringify({ msg: "listening", publicPort: port, internalPort: port })}\n`,
  );
  process.once("SIGTERM", () => {
    server.close();
    stop();
  });
}
