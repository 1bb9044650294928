// The bookkeeping of every request the listener serves, until its answer
// closes: the requests in flight, which a graceful close waits for, and the
// bound on how long an answer may stay unread by its client. Both keep one
// listener for every answer, none made per request: the check lane's
// requests come by the thousand a second.
import type { ServerResponse } from "node:http";
import { constants as h2constants, type ServerHttp2Stream } from "node:http2";

/** A request's answer (node's response, or an HTTP/2 stream served off the stream): it closes once. */
export interface ClosingAnswer {
  once(event: "close", listener: () => void): unknown;
}

/** The requests whose answers are not closed yet, which a graceful close waits for. */
export interface InFlightRequests {
  /** Requests in flight now. */
  readonly count: number;
  /** Counts a request until its answer closes. */
  track(answer: ClosingAnswer): void;
  /** `track` for a caller that hears the close itself: one request more, until `closed`. */
  opened(): void;
  closed(): void;
  /** Resolves once no request is in flight, or after `ms`, whichever comes first. */
  settled(ms: number): Promise<void>;
}

export function createInFlightRequests(): InFlightRequests {
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  // One listener for every answer: no closure per request.
  const closed = () => {
    inFlight--;
    if (inFlight === 0) {
      onIdle?.();
    }
  };
  return {
    get count() {
      return inFlight;
    },
    track(answer) {
      inFlight++;
      answer.once("close", closed);
    },
    opened() {
      inFlight++;
    },
    closed,
    settled(ms) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        onIdle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}

// Unread answers: how long an answer may wait for its client to take it in.

/**
 * Bounds how long an answer may stay unread. A client that stops reading (an
 * HTTP/2 stream window of 0, a full TCP window) would otherwise pin the
 * answer's buffers for as long as its connection lives; past the bound the
 * HTTP/2 stream is reset (CANCEL; the session lives on) or the HTTP/1.1
 * connection closed, which frees them. A long-lived answer whose client
 * keeps up (a health Watch stream) has nothing waiting, and is left alone.
 */
export interface UnreadAnswers {
  /** Watches one answer until it closes. */
  watch(answer: ServerHttp2Stream | ServerResponse): void;
  /** `watch` for a caller that hears the close itself: watched until `forget`. */
  opened(answer: ServerHttp2Stream | ServerResponse): void;
  forget(answer: ServerHttp2Stream | ServerResponse): void;
  /** Stops watching (the server closed). */
  stop(): void;
}

/**
 * One sweep every `ms` for all answers, rather than a timer per answer (the
 * check path is the hottest): an answer seen with bytes waiting for its
 * client at two sweeps in a row is reset, so an answer the client does not
 * take in is held between `ms` and 2 × `ms`.
 */
export function createUnreadAnswers(ms: number): UnreadAnswers {
  /** Open answers, and whether the last sweep saw bytes of each waiting. */
  const open = new Map<ServerHttp2Stream | ServerResponse, boolean>();
  // One listener for every answer (the answer is `this`): no closure per stream.
  function forget(this: ServerHttp2Stream | ServerResponse): void {
    open.delete(this);
  }
  const sweep = setInterval(() => {
    for (const [answer, waitedBefore] of open) {
      // Bytes written and not yet taken by the client's window: node's own
      // count, with (HTTP/1.1) those of the socket.
      const waiting = answer.writableLength > 0;
      if (waiting && waitedBefore) {
        open.delete(answer);
        if ("rstCode" in answer) {
          answer.close(h2constants.NGHTTP2_CANCEL);
        } else {
          answer.destroy();
        }
      } else if (waiting !== waitedBefore) {
        open.set(answer, waiting);
      }
    }
  }, ms);
  sweep.unref();
  return {
    watch(answer) {
      open.set(answer, false);
      // 'close' comes once: `on` spares the wrapper `once` makes per answer.
      answer.on("close", forget);
    },
    opened(answer) {
      open.set(answer, false);
    },
    forget(answer) {
      open.delete(answer);
    },
    stop() {
      clearInterval(sweep);
      open.clear();
    },
  };
}
