// The dual-protocol listener's TLS port.
// Tested by test/integration/connection-resets.test.ts, test/integration/operator-mtls.test.ts.
import { createServer as createTcpServer, type Server } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import type { Connection, ConnectionCap } from "./connection-cap.js";
import type { ProtocolHandOff } from "./protocol-hand-off.js";
import type { ReportClientError } from "./transport-reports.js";

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
