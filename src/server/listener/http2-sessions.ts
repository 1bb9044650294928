import type { Http2Server, Http2Session, ServerHttp2Stream } from "node:http2";
import type { Socket } from "node:net";
import type { Connection } from "./connection-cap.js";

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
