import type { Http2Session } from "node:http2";
import type { Socket } from "node:net";
import type { ReportClientError } from "./transport-reports.js";

/** One accepted TCP connection: it holds a slot of the cap until it is over at every layer. */
export interface Connection {
  readonly raw: Socket;
  /** The peer's address:port, which finds the connection again after its TLS handshake. */
  readonly peer: string;
  /** The TLS socket over `raw`, once its handshake is done. */
  tls?: Socket;
  session?: Http2Session;
}

export interface ConnectionCapOptions {
  /** Most open connections; one over it is closed as soon as it is accepted. */
  maxConnections: number;
  report: ReportClientError;
  /** The number of open connections changed. */
  onOpenConnections?: (open: number) => void;
  /** A connection filled the cap, or came over it. */
  onFull?: () => void;
}

/**
 * The server's own count of open connections, which the cap is held to:
 * node's (getConnections, maxConnections) misses the close of a TLS
 * connection whose HTTP/2 session it never saw end (nodejs/node#42710).
 */
export interface ConnectionCap {
  /** Connections open now. */
  readonly size: number;
  /** Takes a new TCP connection under the cap; undefined when it was over the cap (and is closed). */
  accept(raw: Socket): Connection | undefined;
  /** Ends a connection at every layer and frees its slot, whichever layer saw its end. */
  end(conn: Connection): void;
  /** Ends every open connection. */
  endAll(): void;
  /** Notes a TLS connection from accept to the end of its handshake, found again by its peer. */
  handshakeStarts(conn: Connection): void;
  /** The connection of a TLS socket whose handshake is under way, by its peer's address. */
  handshakeOf(socket: Socket): Connection | undefined;
  /** The connection's handshake is over. */
  handshakeDone(conn: Connection): void;
}

const peerOf = (socket: Socket): string => `${socket.remoteAddress}:${socket.remotePort}`;

export function createConnectionCap(opts: ConnectionCapOptions): ConnectionCap {
  const { maxConnections, report } = opts;
  const connections = new Set<Connection>();
  // TLS connections by peer address, from accept to the end of the handshake.
  const handshaking = new Map<string, Connection>();

  function release(conn: Connection): void {
    handshaking.delete(conn.peer);
    if (connections.delete(conn)) {
      opts.onOpenConnections?.(connections.size);
    }
  }
  function end(conn: Connection): void {
    conn.session?.destroy();
    conn.tls?.destroy();
    conn.raw.destroy();
    release(conn);
  }
  return {
    get size() {
      return connections.size;
    },
    accept(raw) {
      raw.on("error", (err: Error) => report(err, "socket"));
      if (connections.size >= maxConnections) {
        raw.destroy();
        report(new Error("connection over the cap"), "over-cap");
        opts.onFull?.();
        return undefined;
      }
      const conn: Connection = { raw, peer: peerOf(raw) };
      connections.add(conn);
      opts.onOpenConnections?.(connections.size);
      if (connections.size >= maxConnections) {
        opts.onFull?.();
      }
      raw.once("close", () => end(conn));
      return conn;
    },
    end,
    endAll() {
      for (const conn of connections) {
        end(conn);
      }
    },
    handshakeStarts(conn) {
      handshaking.set(conn.peer, conn);
    },
    handshakeOf(socket) {
      return handshaking.get(peerOf(socket));
    },
    handshakeDone(conn) {
      handshaking.delete(conn.peer);
    },
  };
}
