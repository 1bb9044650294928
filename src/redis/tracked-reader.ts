import type { Redis } from "ioredis";

/** The channel Redis publishes a tracking client's invalidations on (RESP2, REDIRECT). */
export const INVALIDATE_CHANNEL = "__redis__:invalidate";

/** Why a pair stopped vouching for its reads. */
export type TrackingLossReason = "connection" | "heartbeat" | "closed";

export interface TrackedReaderEvents {
  /** Keys changed on the server since the reader read them; null: every key (FLUSHALL, FLUSHDB). */
  invalidated(keys: readonly Buffer[] | null): void;
  /** The pair no longer vouches for reads of earlier epochs (a connection lost, a heartbeat missed). */
  lost(reason: TrackingLossReason): void;
}

/**
 * Server-assisted client-side caching on one Redis server (RESP2, default
 * mode): a reader connection with `CLIENT TRACKING on REDIRECT <id>` where
 * `<id>` is the `CLIENT ID` of a subscriber connection to the same server
 * subscribed to {@link INVALIDATE_CHANNEL}. Redis then tells the subscriber
 * about every change of a key the reader read (whoever made it: a script, an
 * operator's DEL, an expiry, an eviction, a flush).
 *
 * `up` is true only once both connections are open, the subscription is
 * confirmed and tracking is confirmed with the subscriber's current id, and
 * `epoch` changes whenever that stops being true: a read started in an older
 * epoch, or while down, must never be cached.
 */
export interface TrackedReader {
  readonly up: boolean;
  /** Changes on every loss; a read vouched for in epoch E is good only while `up` and `epoch === E`. */
  readonly epoch: number;
  /**
   * Either connection ended for good (ioredis gives up on a connect the
   * Sentinel failover detector closed): the pair never comes back up, and
   * whoever owns it builds another.
   */
  readonly ended: boolean;
  /** GET on the tracking reader (so that Redis tracks the key for it). Only while `up`. */
  read(key: string): Promise<Buffer | null>;
  /** Closes both connections for good. */
  close(): void;
}

export interface TrackedReaderOptions {
  /** A connection to the server to track (a standalone or Sentinel client, or a cluster node): duplicated twice. */
  source: Redis;
  events: TrackedReaderEvents;
  /**
   * The subscriber is PINGed this often; three missed answers in a row count
   * as a lost connection (one that stalls without closing carries no
   * invalidations either). Default 250 ms.
   */
  heartbeatMs?: number;
}

export function createTrackedReader(opts: TrackedReaderOptions): TrackedReader {
  const { events } = opts;
  const heartbeatMs = opts.heartbeatMs ?? 250;
  const own = {
    // Both come back on their own after a loss (the source's retry strategy);
    // the subscription is redone by hand, after CLIENT ID, which RESP2 refuses
    // in subscriber mode.
    autoResubscribe: false,
    enableAutoPipelining: false,
    enableOfflineQueue: false,
    lazyConnect: false,
  };
  const subscriber = opts.source.duplicate({ ...own, connectionName: "perps-invalidations" });
  const reader = opts.source.duplicate({ ...own, connectionName: "perps-tracked-reads" });
  let epoch = 0;
  let up = false;
  let closed = false;
  let ended = false;
  let unansweredPings = 0;

  function lose(reason: TrackingLossReason): void {
    epoch += 1;
    const wasUp = up;
    up = false;
    unansweredPings = 0;
    if (wasUp) {
      events.lost(reason);
    }
  }

  async function establish(): Promise<void> {
    const attempt = epoch;
    if (closed || subscriber.status !== "ready" || reader.status !== "ready") {
      return;
    }
    try {
      const id = await subscriber.client("ID");
      await subscriber.subscribe(INVALIDATE_CHANNEL);
      if (attempt !== epoch) {
        return;
      }
      // OFF first: after the subscriber alone came back, the reader still
      // redirects to its old id.
      await reader.call("CLIENT", "TRACKING", "off");
      await reader.call("CLIENT", "TRACKING", "on", "REDIRECT", String(id));
    } catch {
      // A connection failed meanwhile: its close starts the next attempt.
      return;
    }
    if (attempt === epoch && !closed) {
      up = true;
    }
  }

  // Either connection lost: the other is restarted too, so that both come
  // back fresh and establish() runs its whole sequence again.
  function onClose(other: Redis) {
    return () => {
      lose("connection");
      if (!closed && other.status === "ready") {
        other.disconnect(true);
      }
    };
  }
  subscriber.on("close", onClose(reader));
  reader.on("close", onClose(subscriber));
  const onEnd = () => {
    if (!closed) {
      ended = true;
      lose("connection");
    }
  };
  subscriber.on("end", onEnd);
  reader.on("end", onEnd);
  subscriber.on("ready", () => void establish());
  reader.on("ready", () => void establish());
  // Errors are followed by "close"; without a listener they would be thrown.
  subscriber.on("error", () => undefined);
  reader.on("error", () => undefined);
  subscriber.on("messageBuffer", (channel: Buffer, message: unknown) => {
    if (channel.toString() !== INVALIDATE_CHANNEL) {
      return;
    }
    // RESP2 invalidation: an array of key names, or nil for a flush.
    events.invalidated(Array.isArray(message) ? (message as Buffer[]) : null);
  });

  const heartbeat = setInterval(() => {
    if (!up) {
      return;
    }
    if (unansweredPings >= 3) {
      lose("heartbeat");
      subscriber.disconnect(true);
      return;
    }
    unansweredPings += 1;
    const sentIn = epoch;
    subscriber.ping().then(
      () => {
        if (sentIn === epoch) {
          unansweredPings = 0;
        }
      },
      () => undefined,
    );
  }, heartbeatMs);
  heartbeat.unref();

  return {
    get up() {
      return up;
    },
    get epoch() {
      return epoch;
    },
    get ended() {
      return ended;
    },
    read: (key) => reader.getBuffer(key),
    close() {
      if (closed) {
        return;
      }
      closed = true;
      clearInterval(heartbeat);
      lose("closed");
      subscriber.disconnect();
      reader.disconnect();
    },
  };
}
