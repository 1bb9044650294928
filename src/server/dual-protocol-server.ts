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
  constants as h2constants,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import {
  type AddressInfo,
  createServer as createTcpServer,
  type ListenOptions,
  type Server,
  type Socket,
} from "node:net";
import type { Duplex } from "node:stream";
import { createServer as createTlsServer } from "node:tls";
import { SETTING_DEFAULTS } from "../config/setting-defaults.js";
import type { NodeHandler } from "../http/node-handler.js";
import { rawHttp1StatusAnswer, writeStatusAnswer } from "../status/status-answer.js";
import { createAnswerDeadline } from "./answer-deadline.js";
import type { Exchange } from "./exchange.js";
import { newRequestId, settleRequestId } from "./request-id.js";
import {
  CONNECT_REFUSED,
  EXPECTATION_FAILED,
  REQUEST_TIMEOUT,
  refusalAnswer,
  refusalOfClientError,
  type TransportAnswer,
  type TransportRefusal,
} from "./transport-answer.js";

/** Where a client's connection failed. */
export type ClientErrorSource =
  | "socket"
  | "tls-handshake"
  | "http1"
  | "http2-session"
  | "http2-stream"
  | "over-cap";

/**
 * Serves an HTTP/2 stream itself, before node's compatibility layer makes a
 * request and a response of it: returns the stream's exchange when it took
 * the stream, or undefined, having read nothing, to leave it to the handler.
 */
export type StreamHandler = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
) => Exchange | undefined;

export interface DualProtocolServerOptions {
  handler: NodeHandler;
  /** Takes the HTTP/2 streams it serves straight off the stream. Default: none (all go to `handler`). */
  streamHandler?: StreamHandler;
  /** Bind address. */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  /**
   * Bind this process's own listening socket with SO_REUSEPORT (Linux, node
   * >= 22.12), so that several processes on one port each accept and the
   * kernel spreads connections among them; under node:cluster it also keeps
   * the primary out of accepting. Ignored for port 0. Default false.
   */
  reusePort?: boolean;
  /** Most concurrent HTTP/2 streams per connection. Default 100. */
  maxConcurrentStreams?: number;
  /** Time allowed to receive a request's headers. Default 10000 ms. */
  headersTimeoutMs?: number;
  /**
   * Time allowed to receive a whole request, HTTP/1.1 and HTTP/2 alike.
   * Default: the config's (REQUEST_TIMEOUT_MS). An HTTP/1.1 request over it is answered 408 and its
   * connection closed; an HTTP/2 stream over it is answered 408 and reset if
   * nothing was answered yet, else reset (the session lives on).
   */
  requestTimeoutMs?: number;
  /**
   * Most open connections; one over it is closed as soon as it is accepted.
   * Default: the config's (MAX_CONNECTIONS_PER_LISTENER).
   */
  maxConnections?: number;
  /**
   * How long an answer may have bytes waiting for its client (window 0, a
   * client that stops reading) before its HTTP/2 stream is reset or its
   * HTTP/1.1 connection closed: between this and twice this. Default 10000 ms.
   */
  answerTimeoutMs?: number;
  /** How long an idle HTTP/1.1 keep-alive connection stays open. Default 5000 ms. */
  keepAliveTimeoutMs?: number;
  /** An idle HTTP/2 connection is closed after this time. Default 120000 ms. */
  http2IdleTimeoutMs?: number;
  /**
   * Every HTTP/2 session is sent a PING this often; one that does not answer
   * within `http2PingTimeoutMs` is destroyed with its connection. This is
   * what ends a session whose client is gone without the server seeing it
   * (see `probeSessions`). Defaults 10000 and 5000 ms.
   */
  http2PingIntervalMs?: number;
  http2PingTimeoutMs?: number;
  /**
   * Serve TLS with this PEM certificate (chain) and key; ALPN picks h2 or
   * http/1.1. Default: cleartext, where the first bytes pick the protocol.
   */
  tls?: {
    cert: string;
    key: string;
    /** PEM CA(s): ask each client for a certificate, verified against them; none is required. */
    clientCa?: string;
  };
  /**
   * A client's connection failed: reset, broken protocol, failed TLS
   * handshake, over the connection cap. Only that client is affected; the
   * connection is closed. Called at most once per error. Default: ignored.
   */
  onClientError?: (err: Error, source: ClientErrorSource) => void;
  /** The listening socket failed after it listened (e.g. EMFILE on accept); it keeps listening. Default: ignored. */
  onServerError?: (err: Error) => void;
  /** The transport layer answered by itself (400, 408, 431...), with a new `x-request-id`. Default: ignored. */
  onTransportAnswer?: (answer: TransportAnswer) => void;
  /** The number of open connections changed (the count the cap is held to). Default: ignored. */
  onOpenConnections?: (open: number) => void;
}

export interface DualProtocolServer {
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
  /** The bound port (after listen). */
  readonly port: number;
  /** Connections open now, by the server's own count (what `maxConnections` is held to). */
  readonly openConnections: number;
  /**
   * Stops accepting connections, lets in-flight requests finish (up to
   * `graceMs`, default 10000), then closes every connection. HTTP/2 clients
   * get a GOAWAY at once; HTTP/1.1 has none, so for `drainMs` (default 500)
   * requests that arrive on open keep-alive connections are still served,
   * answered with `connection: close`, before idle connections are closed.
   */
  close(graceMs?: number, drainMs?: number): Promise<void>;
}

/**
 * Puts `take` before node's compatibility layer: node's own 'stream'
 * listener, which makes a request and a response of every stream, runs only
 * for the streams `take` leaves.
 */
function takeStreamsFirst(
  h2: ReturnType<typeof createHttp2Server>,
  take: StreamHandler,
  taken: (stream: ServerHttp2Stream, exchange: Exchange) => void,
): void {
  const compat = h2.listeners("stream");
  if (compat.length !== 1) {
    throw new Error(`expected node's one compatibility 'stream' listener, found ${compat.length}`);
  }
  h2.removeAllListeners("stream");
  h2.on("stream", function (this: unknown, ...args: unknown[]) {
    const [stream, headers] = args as [ServerHttp2Stream, IncomingHttpHeaders];
    const exchange = take(stream, headers);
    if (exchange === undefined) {
      for (const listener of compat) {
        Reflect.apply(listener, this, args);
      }
    } else {
      taken(stream, exchange);
    }
  });
}

/** One accepted TCP connection: it holds a slot of the cap until it is over at every layer. */
interface Connection {
  readonly raw: Socket;
  /** The peer's address:port, which finds the connection again after its TLS handshake. */
  readonly peer: string;
  /** The TLS socket over `raw`, once its handshake is done. */
  tls?: Socket;
  session?: Http2Session;
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
  const requestTimeoutMs = opts.requestTimeoutMs ?? SETTING_DEFAULTS.requestTimeoutMs;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeoutMs = Math.min(opts.headersTimeoutMs ?? 10_000, requestTimeoutMs);
  // Resets and broken connections are routine (health checks, scanners,
  // clients going away): each is reported once and never left unhandled,
  // since an 'error' event without a listener stops the process.
  const reported = new WeakSet<Error>();
  const report = (err: Error, source: ClientErrorSource): void => {
    if (!reported.has(err)) {
      reported.add(err);
      opts.onClientError?.(err, source);
    }
  };

  const h1 = createHttp1Server(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: opts.keepAliveTimeoutMs ?? 5000,
      // Node checks the two timeouts above only this often (default 30 s),
      // which would let slow clients hold connections far longer.
      connectionsCheckingInterval: Math.min(1000, headersTimeoutMs),
      // Node would answer an HTTP/1.1 request without Host by itself, a bare
      // 400 with no request id; the handler answers it (see host-guard.ts).
      requireHostHeader: false,
    },
    opts.handler,
  );
  const h2 = createHttp2Server(
    { settings: { maxConcurrentStreams: opts.maxConcurrentStreams ?? 100 } },
    opts.handler,
  );
  h2.setTimeout(opts.http2IdleTimeoutMs ?? 120_000);
  if (opts.streamHandler !== undefined) {
    takeStreamsFirst(h2, opts.streamHandler, (stream, exchange) => {
      trackRequest(stream);
      limitStreamTime(stream, exchange);
    });
  }
  const sessions = new Set<Http2Session>();
  const connectionOf = new WeakMap<Http2Session, Connection>();
  // Streams open on each session and when the last one opened or closed: the
  // idle bound, which the probes' PINGs must not reset.
  const activity = new WeakMap<Http2Session, { open: number; since: number }>();
  // The connection whose socket is being handed to the HTTP/2 server, which
  // emits 'session' for it synchronously.
  let handing: Connection | undefined;
  h2.on("session", (session: Http2Session) => {
    sessions.add(session);
    activity.set(session, { open: 0, since: Date.now() });
    if (handing !== undefined) {
      handing.session = session;
      connectionOf.set(session, handing);
    }
    session.once("close", () => sessions.delete(session));
  });
  // Node has already destroyed the session or stream; this only reports it.
  h2.on("sessionError", (err: Error) => report(err, "http2-session"));
  const answerDeadline = createAnswerDeadline(opts.answerTimeoutMs ?? 10_000);
  h2.on("stream", (stream: ServerHttp2Stream) => {
    stream.on("error", (err: Error) => report(err, "http2-stream"));
    answerDeadline.watch(stream);
    const active = stream.session === undefined ? undefined : activity.get(stream.session);
    if (active !== undefined) {
      active.open++;
      active.since = Date.now();
      stream.once("close", () => {
        active.open--;
        active.since = Date.now();
      });
    }
  });

  const sockets = new Set<Socket>();
  let inFlight = 0;
  let closing = false;
  let onIdle: (() => void) | undefined;

  function trackRequest(res: ServerResponse | Http2ServerResponse | ServerHttp2Stream): void {
    inFlight++;
    res.once("close", () => {
      inFlight--;
      if (inFlight === 0) {
        onIdle?.();
      }
    });
  }
  // The response in progress on each HTTP/1 keep-alive connection: a parse
  // error in the middle of its bytes cannot be answered any more.
  const responding = new WeakMap<object, ServerResponse>();
  h1.on("request", (req: IncomingMessage, res: ServerResponse) => {
    trackRequest(res);
    answerDeadline.watch(res);
    responding.set(req.socket, res);
    res.once("close", () => {
      if (responding.get(req.socket) === res) {
        responding.delete(req.socket);
      }
    });
    if (closing) {
      res.setHeader("connection", "close");
    }
  });
  /** Reports an answer the transport gave by itself, before any handler. */
  const tellRefusal = (
    refusal: TransportRefusal,
    requestId: string,
    reason: string,
    protocol: "http1" | "http2",
  ): void =>
    opts.onTransportAnswer?.({
      status: refusal.status,
      code: refusal.code,
      requestId,
      reason,
      protocol,
    });

  h1.on("clientError", (err: Error & { code?: string }, socket: Duplex) => {
    const resetByPeer = ["ECONNRESET", "EPIPE", "ECONNABORTED", "ETIMEDOUT"].includes(
      err.code ?? "",
    );
    const inProgress = responding.get(socket);
    const answering = inProgress?.headersSent === true && !inProgress.writableEnded;
    if (resetByPeer || !socket.writable || answering) {
      report(err, "http1");
      socket.destroy();
      return;
    }
    const refusal = refusalOfClientError(err.code);
    const requestId = newRequestId();
    socket.end(rawHttp1StatusAnswer(refusalAnswer(refusal, requestId)), () => socket.destroy());
    tellRefusal(refusal, requestId, err.code ?? "bad request", "http1");
  });
  // Not a proxy: CONNECT is refused. Without this listener Node would close
  // the connection without a word.
  h1.on("connect", (req: IncomingMessage, socket: Duplex) => {
    const requestId = settleRequestId(req.headers["x-request-id"]);
    if (socket.writable) {
      socket.end(rawHttp1StatusAnswer(refusalAnswer(CONNECT_REFUSED, requestId)), () =>
        socket.destroy(),
      );
    } else {
      socket.destroy();
    }
    tellRefusal(CONNECT_REFUSED, requestId, "CONNECT", "http1");
  });
  // Without this listener Node would answer 417 itself, with no request id.
  h1.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) => {
    const requestId = newRequestId();
    writeStatusAnswer(res, refusalAnswer(EXPECTATION_FAILED, requestId));
    tellRefusal(EXPECTATION_FAILED, requestId, "unsupported expectation", "http1");
  });
  // The same refusal over HTTP/2, where Node would answer a bare 405.
  h2.on("connect", (req: Http2ServerRequest, res: Http2ServerResponse) => {
    const requestId = settleRequestId(req.headers["x-request-id"]);
    writeStatusAnswer(res, refusalAnswer(CONNECT_REFUSED, requestId));
    tellRefusal(CONNECT_REFUSED, requestId, "CONNECT", "http2");
  });
  h2.on("request", (req: Http2ServerRequest, res: Http2ServerResponse) => {
    trackRequest(res);
    limitRequestTime(req, res);
  });

  /**
   * HTTP/2 has no request timeout of its own: a stream whose body never ends
   * would live as long as its session. A stream still receiving its request
   * after `requestTimeoutMs` is answered 408 (if nothing was answered yet)
   * and reset, as HTTP/1.1's requestTimeout closes the connection.
   */
  function limitRequestTime(req: Http2ServerRequest, res: Http2ServerResponse): void {
    const { stream } = req;
    const timer = setTimeout(() => {
      if (stream.destroyed || stream.state.remoteClose === 1) {
        return; // The whole request arrived in time.
      }
      if (res.headersSent) {
        // Answered already (the handler did not wait for the body), or cut mid-answer.
        stream.close(res.writableEnded ? h2constants.NGHTTP2_NO_ERROR : h2constants.NGHTTP2_CANCEL);
        return;
      }
      // The handler has the request: where it gave the exchange an id (the
      // app's telemetry does), the exchange's own line and count tell this
      // answer; only an exchange nobody tells is reported here.
      const given = res.getHeader("x-request-id");
      const requestId = typeof given === "string" ? given : newRequestId();
      // NO_ERROR after a whole answer: stop sending, the request is refused.
      writeStatusAnswer(res, refusalAnswer(REQUEST_TIMEOUT, requestId), {
        done: () => stream.close(h2constants.NGHTTP2_NO_ERROR),
      });
      if (given === undefined) {
        tellRefusal(REQUEST_TIMEOUT, requestId, "ERR_HTTP2_REQUEST_TIMEOUT", "http2");
      }
    }, requestTimeoutMs);
    stream.once("close", () => clearTimeout(timer));
  }

  /** `limitRequestTime` for a stream a stream handler took: it tells the stream's exchange. */
  function limitStreamTime(stream: ServerHttp2Stream, exchange: Exchange): void {
    const timer = setTimeout(() => {
      if (stream.destroyed || stream.state.remoteClose === 1) {
        return;
      }
      if (stream.headersSent) {
        stream.close(h2constants.NGHTTP2_CANCEL);
        return;
      }
      writeStatusAnswer(stream, refusalAnswer(REQUEST_TIMEOUT, exchange.requestId), {
        done: () => stream.close(h2constants.NGHTTP2_NO_ERROR),
      });
    }, requestTimeoutMs);
    stream.once("close", () => clearTimeout(timer));
  }

  // The server's own count of open connections, which the cap is held to:
  // node's (getConnections, maxConnections) misses the close of a TLS
  // connection whose HTTP/2 session it never saw end (nodejs/node#42710).
  const maxConnections = opts.maxConnections ?? SETTING_DEFAULTS.maxConnectionsPerListener;
  const connections = new Set<Connection>();
  // TLS connections by peer address, from accept to the end of the handshake.
  const handshaking = new Map<string, Connection>();
  const peerOf = (socket: Socket): string => `${socket.remoteAddress}:${socket.remotePort}`;

  function release(conn: Connection): void {
    handshaking.delete(conn.peer);
    if (connections.delete(conn)) {
      opts.onOpenConnections?.(connections.size);
    }
  }
  /** Ends a connection at every layer and frees its slot, whichever layer saw its end. */
  function end(conn: Connection): void {
    conn.session?.destroy();
    conn.tls?.destroy();
    conn.raw.destroy();
    release(conn);
  }
  function accept(raw: Socket): Connection | undefined {
    raw.on("error", (err: Error) => report(err, "socket"));
    if (connections.size >= maxConnections) {
      raw.destroy();
      report(new Error("connection over the cap"), "over-cap");
      return undefined;
    }
    const conn: Connection = { raw, peer: peerOf(raw) };
    connections.add(conn);
    opts.onOpenConnections?.(connections.size);
    raw.once("close", () => end(conn));
    return conn;
  }

  /**
   * A session whose client reset its TLS connection can be left with a
   * write that never completes, below node's JavaScript: no 'error', 'end'
   * or 'close' comes on its socket or session, the idle timeout never fires
   * (node defers it while a write is pending), and its streams never close.
   * Its transport looks alive, so the only test that cannot be fooled is an
   * answer from the peer: a PING not answered within `timeoutMs` ends the
   * session and its connection, and with them its streams (whose answers
   * are then logged and counted as cut).
   */
  const probing = new Set<Http2Session>();
  function probe(session: Http2Session, timeoutMs: number): void {
    if (session.destroyed || probing.has(session)) {
      return;
    }
    const deadline = setTimeout(() => {
      probing.delete(session);
      report(new Error(`no answer to a PING within ${timeoutMs} ms`), "http2-session");
      session.destroy();
      const conn = connectionOf.get(session);
      if (conn !== undefined) {
        end(conn);
      }
    }, timeoutMs);
    const answered = (): void => {
      clearTimeout(deadline);
      probing.delete(session);
    };
    try {
      if (session.ping(answered)) {
        probing.add(session);
        return;
      }
    } catch {
      // Closing already: its own close bounds it.
    }
    clearTimeout(deadline);
  }
  const http2IdleTimeoutMs = opts.http2IdleTimeoutMs ?? 120_000;
  const pingTimeoutMs = opts.http2PingTimeoutMs ?? 5000;
  function probeSessions(): void {
    const now = Date.now();
    for (const session of sessions) {
      const active = activity.get(session);
      if (active !== undefined && active.open === 0 && now - active.since >= http2IdleTimeoutMs) {
        session.close(); // Idle: GOAWAY, and the session ends with no stream open.
      }
      probe(session, pingTimeoutMs);
    }
  }
  const prober = setInterval(probeSessions, opts.http2PingIntervalMs ?? 10_000);
  prober.unref();

  function track(socket: Socket): void {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    // For the whole life of the connection: while the first bytes pick the
    // protocol no server listens yet, and a reset must not go unhandled.
    socket.on("error", (err: Error) => report(err, "socket"));
  }

  function cleartext(conn: Connection): void {
    const socket = conn.raw;
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
        handing = conn;
        h2.emit("connection", socket);
        handing = undefined;
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
    // A connection that never sends a byte must not be held forever.
    socket.setTimeout(headersTimeoutMs, () => socket.destroy());
  }

  let tcp: Server;
  if (opts.tls === undefined) {
    tcp = createTcpServer((raw) => {
      const conn = accept(raw);
      if (conn !== undefined) {
        cleartext(conn);
      }
    });
  } else {
    const tlsServer = createTlsServer({
      cert: opts.tls.cert,
      key: opts.tls.key,
      ...(opts.tls.clientCa === undefined
        ? {}
        : { ca: opts.tls.clientCa, requestCert: true, rejectUnauthorized: false }),
      ALPNProtocols: ["h2", "http/1.1"],
      // A client that does not finish the handshake must not be held forever.
      handshakeTimeout: headersTimeoutMs,
    });
    tlsServer.on("secureConnection", (socket) => {
      const conn = handshaking.get(peerOf(socket));
      if (conn === undefined) {
        socket.destroy(); // Its connection was ended during the handshake.
        return;
      }
      handshaking.delete(conn.peer);
      if (opts.tls?.clientCa !== undefined && !socket.authorized) {
        // A certificate whose issuer has the client CA's name but not its key
        // fails its signature check inside OpenSSL, which leaves the error on
        // the queue: the connection's next read would fail with it
        // (ERR_SSL_EVP_LIB) and drop a caller that merely counts as having no
        // certificate. Reading the peer's certificate clears the queue.
        socket.getPeerX509Certificate();
      }
      conn.tls = socket;
      socket.once("close", () => end(conn));
      track(socket);
      if (socket.alpnProtocol === "h2") {
        handing = conn;
        h2.emit("connection", socket);
        handing = undefined;
      } else {
        h1.emit("connection", socket);
      }
    });
    // Handshake failures (scanners, wrong protocol, resets) are the client's problem.
    tlsServer.on("tlsClientError", (err, socket) => {
      report(err, "tls-handshake");
      const conn = handshaking.get(peerOf(socket));
      socket.destroy();
      if (conn !== undefined) {
        end(conn);
      }
    });
    // The TLS server never listens: our own accepts it each connection under the cap.
    tcp = createTcpServer((raw) => {
      const conn = accept(raw);
      if (conn !== undefined) {
        handshaking.set(conn.peer, conn);
        tlsServer.emit("connection", raw);
      }
    });
  }

  let port = 0;
  return {
    get port() {
      return port;
    },
    get openConnections() {
      return connections.size;
    },
    listen() {
      return new Promise((resolve, reject) => {
        tcp.once("error", reject);
        // `reusePort` is newer than node 20's typings.
        const options: ListenOptions & { reusePort?: boolean } =
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
          h1.emit("listening");
          resolve(port);
        });
      });
    },
    async close(graceMs = 10_000, drainMs = 500) {
      closing = true;
      const deadline = Date.now() + graceMs;
      const stopped = new Promise<void>((resolve) => tcp.close(() => resolve()));
      clearInterval(prober);
      for (const session of sessions) {
        session.close(); // GOAWAY: no new streams, open ones finish.
        // A session whose client is gone would hold the stop for the whole grace.
        probe(session, Math.min(pingTimeoutMs, 1000));
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
      for (const conn of connections) {
        end(conn);
      }
      h1.close(); // Stops its connection-checking timer.
      answerDeadline.stop();
      await stopped;
    },
  };
}
