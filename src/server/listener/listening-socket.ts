import type { Server as HttpServer } from "node:http";
import type { AddressInfo, ListenOptions, Server } from "node:net";

/** Where and how to listen; read when `listen` is called. */
export interface ListeningSocketOptions {
  host: string;
  /** 0 picks a free one. */
  port: number;
  /** SO_REUSEPORT, for a fixed port only. */
  reusePort?: boolean;
  /** The listening socket failed after it listened; it keeps listening. */
  onServerError?: (err: Error) => void;
}

/** The listener's one listening socket. */
export interface ListeningSocket {
  /** The bound port (0 before `listen`). */
  readonly port: number;
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
}

/**
 * Listens with `tcp`, the server that accepts every connection; `http1`,
 * which is handed its sockets, learns that the listener listens.
 */
export function listeningSocket(
  tcp: Server,
  http1: HttpServer,
  opts: ListeningSocketOptions,
): ListeningSocket {
  let port = 0;
  return {
    get port() {
      return port;
    },
    listen() {
      return new Promise((resolve, reject) => {
        tcp.once("error", reject);
        const options: ListenOptions =
          opts.reusePort === true && opts.port !== 0
            ? { port: opts.port, host: opts.host, exclusive: true, reusePort: true }
            : { port: opts.port, host: opts.host };
        tcp.listen(options, () => {
          tcp.off("error", reject);
          // From now on an error (e.g. EMFILE when accepting) concerns one
          // connection; the listener goes on.
          tcp.on("error", (err: Error) => opts.onServerError?.(err));
          port = (tcp.address() as AddressInfo).port;
          // The HTTP/1 server never listens itself (it is handed sockets), but
          // its connection tracking, which enforces headersTimeout and
          // requestTimeout and finds idle connections, starts on 'listening'.
          http1.emit("listening");
          resolve(port);
        });
      });
    },
  };
}
