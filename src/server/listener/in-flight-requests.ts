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
