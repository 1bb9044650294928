// Where the dual-protocol listener's connections go once their protocol is
// known, and how each of its two ports learns it: the cleartext port from a
// connection's first bytes, the TLS port from its handshake's ALPN. Each
// accepts its connections under the cap and hands them to HTTP/1.1's or
// HTTP/2's server.
// Tested by test/integration/connection-resets.test.ts, test/integration/graceful-stop.test.ts, test/integration/operator-mtls.test.ts, test/unit/server/dual-protocol-server.test.ts.
import type { Server as HttpServer } from "node:http";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import type { Connection, ConnectionCap } from "./connection-cap.js";
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

// The cleartext port, where a connection's first bytes pick its protocol.

// An HTTP/2 connection with prior knowledge starts with the preface "PRI * HTTP/2.0";
// no HTTP/1.1 request starts with "PRI".
const H2_PREFACE_START = Buffer.from("PRI");

/** Reads a cleartext connection's first bytes, which pick its protocol, and hands it over. */
export function sniffProtocol(
  conn: Connection,
  handOff: ProtocolHandOff,
  headersTimeoutMs: number,
): void {
  const socket = conn.raw;
  handOff.track(socket);
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    if (head.length < H2_PREFACE_START.length && head[0] === H2_PREFACE_START[0]) {
      return; // Too short to tell yet.
    }
    socket.off("data", onData);
    socket.setTimeout(0); // The chosen protocol's server applies its own timeouts.
    socket.pause();
    socket.unshift(head);
    if (head.subarray(0, H2_PREFACE_START.length).equals(H2_PREFACE_START)) {
      // The HTTP/2 session reads what is buffered on the next tick; resuming
      // here would hand those bytes to nobody.
      handOff.toHttp2(conn, socket);
    } else {
      handOff.toHttp1(socket);
      socket.resume();
    }
  };
  socket.on("data", onData);
  // A connection that never sends a byte must not be held forever.
  socket.setTimeout(headersTimeoutMs, () => socket.destroy());
}

export interface CleartextListenerOptions {
  connections: ConnectionCap;
  handOff: ProtocolHandOff;
  /** Time allowed for the first bytes. */
  headersTimeoutMs: number;
}

/**
 * One port that speaks both HTTP/1.1 and cleartext HTTP/2 with prior
 * knowledge: each connection accepted under the cap, its first bytes pick
 * the protocol.
 */
export function cleartextListener(opts: CleartextListenerOptions): Server {
  const { connections, handOff, headersTimeoutMs } = opts;
  // As node's HTTP servers do: an answer is sent when written, not held for Nagle's algorithm.
  return createTcpServer({ noDelay: true }, (raw) => {
    const conn = connections.accept(raw);
    if (conn !== undefined) {
      sniffProtocol(conn, handOff, headersTimeoutMs);
    }
  });
}

// The TLS port, where the handshake's ALPN picks the protocol.

/** The listener's certificate (chain) and key, and the CAs of client certificates, in PEM. */
export interface TlsCredentials {
  cert: string;
  key: string;
  /** Ask each client for a certificate, verified against these; none is required. */
  clientCa?: string;
}

export interface TlsListenerOptions {
  connections: ConnectionCap;
  handOff: ProtocolHandOff;
  report: ReportClientError;
  /** Time allowed for the TLS handshake. */
  headersTimeoutMs: number;
}

/**
 * A TLS port whose ALPN picks h2 or http/1.1. The TLS server never listens:
 * a TCP server of ours accepts each connection under the cap and hands it
 * to the TLS server for its handshake.
 */
export function tlsListener(tls: TlsCredentials, opts: TlsListenerOptions): Server {
  const { connections, report } = opts;
  const tlsServer = createTlsServer({
    cert: tls.cert,
    key: tls.key,
    ...(tls.clientCa === undefined
      ? {}
      : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: false }),
    ALPNProtocols: ["h2", "http/1.1"],
    // A client that does not finish the handshake must not be held forever.
    handshakeTimeout: opts.headersTimeoutMs,
  });
  tlsServer.on("secureConnection", (socket: TLSSocket) => {
    const conn = connections.handshakeOf(socket);
    if (conn === undefined) {
      socket.destroy(); // Its connection was ended during the handshake.
      return;
    }
    connections.handshakeDone(conn);
    if (tls.clientCa !== undefined && !socket.authorized) {
      // A certificate whose issuer has the client CA's name but not its key
      // fails its signature check inside OpenSSL, which leaves the error on
      // the queue: the connection's next read would fail with it
      // (ERR_SSL_EVP_LIB) and drop a caller that merely counts as having no
      // certificate. Reading the peer's certificate clears the queue.
      socket.getPeerX509Certificate();
    }
    serveSecured(conn, socket, connections, opts.handOff);
  });
  // Handshake failures (scanners, wrong protocol, resets) are the client's problem.
  tlsServer.on("tlsClientError", (err, socket) => {
    report(err, "tls-handshake");
    const conn = connections.handshakeOf(socket);
    socket.destroy();
    if (conn !== undefined) {
      connections.end(conn);
    }
  });
  // As node's HTTP servers do: an answer is sent when written, not held for Nagle's algorithm.
  return createTcpServer({ noDelay: true }, (raw) => {
    const conn = connections.accept(raw);
    if (conn !== undefined) {
      connections.handshakeStarts(conn);
      tlsServer.emit("connection", raw);
    }
  });
}

/** A connection whose handshake is done goes to the protocol its ALPN chose. */
function serveSecured(
  conn: Connection,
  socket: TLSSocket,
  connections: ConnectionCap,
  handOff: ProtocolHandOff,
): void {
  conn.tls = socket;
  socket.once("close", () => connections.end(conn));
  handOff.track(socket);
  if (socket.alpnProtocol === "h2") {
    handOff.toHttp2(conn, socket);
  } else {
    handOff.toHttp1(socket);
  }
}
