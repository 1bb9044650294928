// The HTTP/2 server's sessions: each followed from its 'session' event to
// its close, with the connection it runs on and its streams' activity; and
// the bounds they are held to, checked on a timer (a PING answered in time,
// the idle timeout), which end a session whose client is gone together with
// its connection.
import type { Http2Server, Http2Session, ServerHttp2Stream } from "node:http2";
import type { Socket } from "node:net";
import type { Connection, ConnectionCap } from "./connection-cap.js";
import type { ReportClientError } from "./transport-reports.js";

/** Streams open on a session, and when the last one opened or closed. */
export interface StreamActivity {
  open: number;
  since: number;
}

/** The HTTP/2 server's open sessions, each with its connection and its streams' activity. */
export interface Http2Sessions {
  /** Sessions open now. */
  readonly open: ReadonlySet<Http2Session>;
  /** The connection the session runs on (handed over with `handOver`). */
  connectionOf(session: Http2Session): Connection | undefined;
  /** The session's stream activity: the idle bound, which the probes' PINGs must not reset. */
  activityOf(session: Http2Session): StreamActivity | undefined;
  /** Counts a new stream as open on its session, until `streamClosed`. */
  streamOpened(stream: ServerHttp2Stream): void;
  streamClosed(stream: ServerHttp2Stream): void;
  /** Hands the connection's socket to the HTTP/2 server, which opens its session for it. */
  handOver(conn: Connection, socket: Socket): void;
}

// Where a stream keeps its session's activity, for the one shared 'close' listener.
const ACTIVITY = Symbol("session activity");
type CountedStream = ServerHttp2Stream & { [ACTIVITY]?: StreamActivity };

function streamClosed(stream: CountedStream): void {
  const active = stream[ACTIVITY];
  if (active !== undefined) {
    active.open--;
    active.since = Date.now();
  }
}

/** Follows the sessions of `h2` from its 'session' event until each closes. */
export function trackHttp2Sessions(h2: Http2Server): Http2Sessions {
  const sessions = new Set<Http2Session>();
  const connectionOf = new WeakMap<Http2Session, Connection>();
  const activity = new WeakMap<Http2Session, StreamActivity>();
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
  return {
    open: sessions,
    connectionOf: (session) => connectionOf.get(session),
    activityOf: (session) => activity.get(session),
    streamOpened(stream) {
      const active = stream.session === undefined ? undefined : activity.get(stream.session);
      if (active !== undefined) {
        active.open++;
        active.since = Date.now();
        (stream as CountedStream)[ACTIVITY] = active;
      }
    },
    streamClosed,
    handOver(conn, socket) {
      handing = conn;
      h2.emit("connection", socket);
      handing = undefined;
    },
  };
}

// The bounds every session is held to: a PING answered in time, the idle timeout.

export interface Http2SessionLimitsOptions {
  sessions: Http2Sessions;
  connections: ConnectionCap;
  report: ReportClientError;
  /** A session with no stream open for this long is closed. */
  idleTimeoutMs: number;
  /** Every session is sent a PING this often… */
  pingIntervalMs: number;
  /** …and one that does not answer within this time is destroyed with its connection. */
  pingTimeoutMs: number;
}

/** The bounds every HTTP/2 session is held to, checked every `pingIntervalMs`. */
export interface Http2SessionLimits {
  /**
   * Checks every session now, each PING with a deadline of at most 1 s (at
   * most once a deadline): for when the connection cap is full, which
   * sessions whose clients are gone must not hold for a whole interval.
   */
  checkNow(): void;
  /**
   * Stops the periodic checks and closes every session (GOAWAY: no new
   * streams, open ones finish), each probed once more with a short deadline:
   * a session whose client is gone would hold the stop for the whole grace.
   */
  closeSessions(): void;
}

/**
 * A session whose client reset its TLS connection can be left with a
 * write that never completes, below node's JavaScript: no 'error', 'end'
 * or 'close' comes on its socket or session, the idle timeout never fires
 * (node defers it while a write is pending), and its streams never close.
 * Its transport looks alive, so the only test that cannot be fooled is an
 * answer from the peer: a PING not answered within its deadline ends the
 * session and its connection, and with them its streams (whose answers
 * are then logged and counted as cut). The same checks close sessions idle
 * for `idleTimeoutMs`, which the PINGs themselves must not keep open.
 *
 * Before node 24 (22 included) resets leave such sessions often enough
 * that an attacker refills a small cap faster than one interval ends them:
 * a full cap checks every session at once, with a short deadline
 * (`checkNow`). And a session can be destroyed while its socket stays
 * open, on every node: node ends the socket and waits for the peer's end,
 * which a client that reset (or one that never ends its side) does not
 * give, so the session's own 'close', which waits for the socket's, never
 * comes. The checks end the connection of a session found destroyed by two
 * checks in a row.
 */
export function startHttp2SessionLimits(opts: Http2SessionLimitsOptions): Http2SessionLimits {
  const { sessions, connections, report, idleTimeoutMs, pingTimeoutMs } = opts;
  const probing = new Set<Http2Session>();
  // Sessions found destroyed by a check, whose connection is still open.
  const destroyedBefore = new WeakSet<Http2Session>();
  const urgentTimeoutMs = Math.min(pingTimeoutMs, 1000);
  let lastUrgent = 0;
  function endConnection(session: Http2Session): void {
    const conn = sessions.connectionOf(session);
    if (conn !== undefined) {
      connections.end(conn);
    }
  }
  function probe(session: Http2Session, timeoutMs: number): void {
    if (session.destroyed || probing.has(session)) {
      return;
    }
    const deadline = setTimeout(() => {
      probing.delete(session);
      report(new Error(`no answer to a PING within ${timeoutMs} ms`), "http2-session");
      session.destroy();
      endConnection(session);
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
  function probeSessions(timeoutMs: number): void {
    const now = Date.now();
    for (const session of sessions.open) {
      if (session.destroyed) {
        // Its socket gets a check's time to close by itself (node ends it
        // after the session); then it is closed here.
        if (destroyedBefore.has(session)) {
          endConnection(session);
        } else {
          destroyedBefore.add(session);
        }
        continue;
      }
      const active = sessions.activityOf(session);
      if (active !== undefined && active.open === 0 && now - active.since >= idleTimeoutMs) {
        session.close(); // Idle: GOAWAY, and the session ends with no stream open.
      }
      probe(session, timeoutMs);
    }
  }
  const prober = setInterval(() => probeSessions(pingTimeoutMs), opts.pingIntervalMs);
  prober.unref();
  return {
    checkNow() {
      const now = Date.now();
      if (now - lastUrgent >= urgentTimeoutMs) {
        lastUrgent = now;
        probeSessions(urgentTimeoutMs);
      }
    },
    closeSessions() {
      clearInterval(prober);
      for (const session of sessions.open) {
        session.close(); // GOAWAY: no new streams, open ones finish.
        probe(session, urgentTimeoutMs);
      }
    },
  };
}
