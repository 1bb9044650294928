import {
  createServer as createHttp1Server,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import {
  type AddressInfo,
  createServer as createTcpServer,
  type Server,
  type Socket,
} from "node:net";
import { createServer as createTlsServer } from "node:tls";
import type { NodeHandler } from "./node-handler.js";

export interface DualProtocolServerOptions {
  handler: NodeHandler;
  /** Bind address. */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Most concurrent HTTP/2 streams per connection. Default 100. */
  maxConcurrentStreams?: number;
  /** Time allowed to receive a request's headers. Default 10000 ms. */
  headersTimeoutMs?: number;
  /** Time allowed to receive a whole request. Default 30000 ms. */
  requestTimeoutMs?: number;
  /** How long an idle HTTP/1.1 keep-alive connection stays open. Default 5000 ms. */
  keepAliveTimeoutMs?: number;
  /** An idle HTTP/2 connection is closed after this time. Default 120000 ms. */
  http2IdleTimeoutMs?: number;
  /**
   * Serve TLS with this PEM certificate (chain) and key; ALPN picks h2 or
   * http/1.1. Default: cleartext, where the first bytes pick the protocol.
   */
  tls?: { cert: string; key: string };
}

export interface DualProtocolServer {
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
  /** The bound port (after listen). */
  readonly port: number;
  /**
   * Stops accepting connections, lets in-flight requests finish (up to
   * `graceMs`, default 10000), then closes every connection. HTTP/2 clients
   * get a GOAWAY at once; HTTP/1.1 has none, so for `drainMs` (default 500)
   * requests that arrive on open keep-alive connections are still served,
   * answered with `connection: close`, before idle connections are closed.
   */
  close(graceMs?: number, drainMs?: number): Promise<void>;
}

// An HTTP/2 connection with prior knowledge starts with the preface "PRI * HTTP/2.0";
// no HTTP/1.1 request starts with "PRI".
const H2_PREFACE_START = Buffer.from("PRI");

/**
 * One port that speaks both HTTP/1.1 and cleartext HTTP/2 with prior knowledge:
 * the first bytes of each connection pick the protocol. So gRPC clients
 * (HTTP/2), curl, browsers and fetch (HTTP/1.1) all reach the same handler.
 */
export function createDualProtocolServer(opts: DualProtocolServerOptions): DualProtocolServer {
  const h1 = createHttp1Server(
    {
      headersTimeout: opts.headersTimeoutMs ?? 10_000,
      requestTimeout: opts.requestTimeoutMs ?? 30_000,
      keepAliveTimeout: opts.keepAliveTimeoutMs ?? 5000,
      // Node checks the two timeouts above only this often (default 30 s),
      // which would let slow clients hold connections far longer.
      connectionsCheckingInterval: Math.min(1000, opts.headersTimeoutMs ?? 10_000),
    },
    opts.handler,
  );
  const h2 = createHttp2Server(
    { settings: { maxConcurrentStreams: opts.maxConcurrentStreams ?? 100 } },
    opts.handler,
  );
  h2.setTimeout(opts.http2IdleTimeoutMs ?? 120_000);
  const sessions = new Set<Http2Session>();
  h2.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });

  const sockets = new Set<Socket>();
  let inFlight = 0;
  let closing = false;
  let onIdle: (() => void) | undefined;

  function trackRequest(res: ServerResponse | Http2ServerResponse): void {
    inFlight++;
    res.once("close", () => {
      inFlight--;
      if (inFlight === 0) {
        onIdle?.();
      }
    });
  }
  h1.on("request", (_req: IncomingMessage, res: ServerResponse) => {
    trackRequest(res);
    if (closing) {
      res.setHeader("connection", "close");
    }
  });
  h2.on("request", (_req: Http2ServerRequest, res: Http2ServerResponse) => trackRequest(res));

  function track(socket: Socket): void {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  }

  function cleartext(socket: Socket): void {
    track(socket);
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
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
    // A connection that never sends a byte must not be held forever.
    socket.setTimeout(opts.headersTimeoutMs ?? 10_000, () => socket.destroy());
  }

  let tcp: Server;
  if (opts.tls === undefined) {
    tcp = createTcpServer(cleartext);
  } else {
    const tlsServer = createTlsServer({
      cert: opts.tls.cert,
      key: opts.tls.key,
      ALPNProtocols: ["h2", "http/1.1"],
      // A client that does not finish the handshake must not be held forever.
      handshakeTimeout: opts.headersTimeoutMs ?? 10_000,
    });
    tlsServer.on("secureConnection", (socket) => {
      track(socket);
      (socket.alpnProtocol === "h2" ? h2 : h1).emit("connection", socket);
    });
    // Handshake failures (scanners, wrong protocol) are the client's problem.
    tlsServer.on("tlsClientError", (_err, socket) => socket.destroy());
    tcp = tlsServer;
  }

  let port = 0;
  return {
    get port() {
      return port;
    },
    listen() {
      return new Promise((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen(opts.port, opts.host, () => {
          tcp.off("error", reject);
          port = (tcp.address() as AddressInfo).port;
          // The HTTP/1 server never listens itself (it is handed sockets), but
          // its connection tracking, which enforces headersTimeout and
          // requestTimeout and finds idle connections, starts on 'listening'.
          h1.emit("listening");
          resolve(port);
        });
      });
    },
    async close(graceMs = 10_000, drainMs = 500) {
      closing = true;
      const deadline = Date.now() + graceMs;
      const stopped = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const session of sessions) {
        session.close(); // GOAWAY: no new streams, open ones finish.
      }
      // A client may be sending on an idle keep-alive connection right now;
      // closing it under that request would cut the request off.
      const drainEnd = Date.now() + Math.min(drainMs, graceMs);
      while (Date.now() < drainEnd && sockets.size > 0) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      h1.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
          onIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      for (const socket of sockets) {
        socket.destroy();
      }
      h1.close(); // Stops its connection-checking timer.
      await stopped;
    },
  };
}
