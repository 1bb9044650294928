// Where the dual-protocol listener's connections go once their protocol is known.
// Tested by test/integration/connection-resets.test.ts, test/integration/graceful-stop.test.ts, test/unit/server/dual-protocol-server.test.ts.
import type { Server as HttpServer } from "node:http";
import type { Socket } from "node:net";
import type { Connection } from "./connection-cap.js";
import type { Http2Sessions } from "./http2-sessions.js";
import type { ReportClientError } from "./transport-reports.js";

/**
 * Where a connection goes once its protocol is known, and the sockets that
 * go there, which a graceful close waits for and then destroys.
 */
export interface ProtocolHandOff {
  /** Sockets tracked and not closed yet. */
  readonly open: number;
  /** Keeps the socket until it closes, its errors reported, from before its protocol is known. */
  track(socket: Socket): void;
  /** Gives the socket to the HTTP/1.1 server. */
  toHttp1(socket: Socket): void;
  /** Gives the connection's socket to the HTTP/2 server, which opens a session for it. */
  toHttp2(conn: Connection, socket: Socket): void;
  /** Destroys every socket still open. */
  destroyAll(): void;
}

export function protocolHandOff(
  http1: HttpServer,
  http2: Http2Sessions,
  report: ReportClientError,
): ProtocolHandOff {
  const sockets = new Set<Socket>();
  return {
    get open() {
      return sockets.size;
    },
    track(socket) {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      // For the whole life of the connection: while the first bytes pick the
      // protocol no server listens yet, and a reset must not go unhandled.
      socket.on("error", (err: Error) => report(err, "socket"));
    },
    toHttp1(socket) {
      http1.emit("connection", socket);
    },
    toHttp2(conn, socket) {
      http2.handOver(conn, socket);
    },
    destroyAll() {
      for (const socket of sockets) {
        socket.destroy();
      }
    },
  };
}
