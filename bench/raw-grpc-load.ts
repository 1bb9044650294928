import type { LoadResult } from "./load-result.js";
import { LoadTally } from "./load-tally.js";
import { connectRawGrpc } from "./raw-grpc-client.js";

export interface RawGrpcLoadOptions {
  address: string;
  path: string;
  /**
   * Pre-framed requests (grpcFrame), sent in turn and again from the first
   * when all have been; with `once`, each sent once.
   */
  frames: readonly Buffer[];
  /**
   * Closed loop, each frame sent at most once: until all have been sent (with
   * `seconds` 0) or the time is up, whichever comes first.
   */
  once?: boolean;
  /** Calls in flight at once, spread over `connections`. */
  concurrency: number;
  /** HTTP/2 connections. Default 4. */
  connections?: number;
  seconds: number;
  /**
   * Whether a successful call's answer counts as a success, from its
   * message's length. Default: every one.
   */
  accept?: (messageLength: number) => boolean;
  /** Instead of a closed loop: this many calls per second, evenly spaced (open model). */
  rate?: number;
}

/**
 * gRPC load over HTTP/2 on bare sockets (bench/raw-grpc-client.ts). Closed loop by
 * default: `concurrency` callers, each sending its next call when the
 * previous one answers. With `rate`: call i is due at start + i / rate
 * whatever happened to the earlier ones, and its latency counts from then,
 * so queueing cannot hide (as bench/paced-http-load.ts for HTTP/1.1).
 */
export async function runRawGrpcLoad(opts: RawGrpcLoadOptions): Promise<LoadResult> {
  if (opts.frames.length === 0) {
    throw new Error("no requests to send");
  }
  const client = await connectRawGrpc({
    address: opts.address,
    path: opts.path,
    connections: opts.connections ?? 4,
  });
  const accept = opts.accept ?? (() => true);
  const tally = new LoadTally();
  let sent = 0;
  // Set once no more calls will be sent: the load ends when the last one answers.
  let stopped = false;
  const nextFrame = (): Buffer => opts.frames[sent++ % opts.frames.length] ?? Buffer.alloc(5);
  const call = (due: number, then: () => void) =>
    client.call(nextFrame(), (failure, length) => {
      if (failure !== undefined) {
        tally.failure(failure);
      } else if (!accept(length)) {
        tally.failure("not accepted");
      } else {
        tally.success(performance.now() - due);
      }
      then();
    });
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  const { rate } = opts;
  await new Promise<void>((resolve) => {
    const finishedAll = () => {
      if (stopped && tally.answered === sent) {
        resolve();
      }
    };
    if (rate === undefined) {
      // With `once` and no time (seconds 0), until every frame has been sent.
      const more = () =>
        (!opts.once || sent < opts.frames.length) &&
        ((opts.once && opts.seconds === 0) || performance.now() < deadline);
      const caller = () => {
        if (more()) {
          call(performance.now(), caller);
        } else {
          stopped = true;
          finishedAll();
        }
      };
      for (let i = 0; i < opts.concurrency; i++) {
        caller();
      }
      return;
    }
    const total = Math.floor(rate * opts.seconds);
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      while (sent < due) {
        call(started + (sent / rate) * 1000, finishedAll);
      }
      if (sent >= total) {
        clearInterval(tick);
        stopped = true;
        finishedAll();
      }
    }, 1);
  });
  const seconds = (performance.now() - started) / 1000;
  client.close();
  return tally.result(sent, seconds);
}
