import type { HttpLoadRequests } from "./http-load-requests.js";
import type { LoadResult } from "./load-result.js";
import { LoadTally } from "./load-tally.js";
import { connectRawHttp, type RawHttpConnection } from "./raw-http-connection.js";

/** The load ends when every body has answered, or when `seconds` are up (bearer tokens need it). */
export interface RawHttpLoadOptions extends HttpLoadRequests {
  /** Stop sending after this long (default: when every body has been sent). */
  seconds?: number;
  /** Keep-alive connections, one request in flight on each (closed loop). */
  connections: number;
  /**
   * Whether an answer counts as a success, from its status and body.
   * Default: any 2xx.
   */
  accept?: (status: number, body: Buffer) => boolean;
}

/**
 * Closed-loop HTTP/1.1 load on bare sockets (bench/raw-http-connection.ts):
 * every connection sends its next request as soon as the previous one
 * answers, until every body has been sent once (or `seconds` are up) and
 * every request sent has answered. Requests are
 * built before the clock starts, so the load generator spends its time on
 * sockets only. A failed connection is replaced, and its request counts as
 * an error.
 */
export async function runRawHttpLoad(opts: RawHttpLoadOptions): Promise<LoadResult> {
  const target = new URL(opts.path, opts.url);
  const head = `${opts.method} ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\n`;
  const tokens = opts.bearerTokens;
  if (tokens !== undefined && (opts.seconds === undefined || tokens.length === 0)) {
    throw new Error("a bearer-token load needs tokens and seconds");
  }
  const requests =
    tokens === undefined
      ? opts.bodies.map((body) =>
          Buffer.from(
            `${head}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          ),
        )
      : tokens.map((token) => Buffer.from(`${head}authorization: Bearer ${token}\r\n\r\n`));
  // Bearer requests go round; bodies are sent once each.
  const total = tokens === undefined ? requests.length : Number.POSITIVE_INFINITY;
  const accept = opts.accept ?? ((status: number) => status >= 200 && status < 300);
  const tally = new LoadTally();
  let sent = 0;
  let stopped = false;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const finishedAll = () => {
    if ((stopped || sent === total) && tally.answered === sent) {
      resolveDone();
    }
  };
  const sendNext = (connection: RawHttpConnection) => {
    const request = stopped || sent >= total ? undefined : requests[sent % requests.length];
    if (request === undefined) {
      connection.close();
      finishedAll();
      return;
    }
    sent++;
    const at = performance.now();
    connection.send(request, (status, body) => {
      if (status === undefined) {
        tally.failure("transport");
      } else if (accept(status, body)) {
        tally.success(performance.now() - at);
      } else {
        tally.failure(String(status));
      }
      finishedAll();
    });
  };
  const host = target.hostname;
  const port = Number(target.port);
  const events = {
    idle: sendNext,
    closed: () => {
      // A connection lost while requests remain is replaced.
      if (!stopped && sent < total) {
        open();
      }
    },
  };
  const open = () => {
    const connection = connectRawHttp(host, port, events);
    sendNext(connection);
  };
  const started = performance.now();
  const timer =
    opts.seconds === undefined
      ? undefined
      : setTimeout(() => {
          stopped = true;
          finishedAll();
        }, opts.seconds * 1000);
  finishedAll();
  for (let i = 0; i < Math.min(opts.connections, total); i++) {
    open();
  }
  await done;
  clearTimeout(timer);
  return tally.result(sent, (performance.now() - started) / 1000);
}
