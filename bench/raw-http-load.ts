import type { LoadResult } from "./load-result.js";
import { LoadTally } from "./load-tally.js";
import { connectRawHttp, type RawHttpConnection } from "./raw-http-connection.js";

export interface RawHttpLoadOptions {
  url: string;
  method: "POST" | "DELETE";
  path: string;
  /** Pre-signed JSON bodies, each sent once, in turn; the load ends when all have answered. */
  bodies: readonly string[];
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
 * answers, until every body has been sent once and answered. Requests are
 * built before the clock starts, so the load generator spends its time on
 * sockets only. A failed connection is replaced, and its request counts as
 * an error.
 */
export async function runRawHttpLoad(opts: RawHttpLoadOptions): Promise<LoadResult> {
  const target = new URL(opts.path, opts.url);
  const head = `${opts.method} ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\n`;
  const requests = opts.bodies.map((body) =>
    Buffer.from(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`),
  );
  const accept = opts.accept ?? ((status: number) => status >= 200 && status < 300);
  const tally = new LoadTally();
  let sent = 0;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const sendNext = (connection: RawHttpConnection) => {
    const request = requests[sent];
    if (request === undefined) {
      connection.close();
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
      if (tally.answered === requests.length) {
        resolveDone();
      }
    });
  };
  const host = target.hostname;
  const port = Number(target.port);
  const events = {
    idle: sendNext,
    closed: () => {
      // A connection lost while requests remain is replaced.
      if (sent < requests.length) {
        open();
      }
    },
  };
  const open = () => {
    const connection = connectRawHttp(host, port, events);
    sendNext(connection);
  };
  const started = performance.now();
  if (requests.length === 0) {
    resolveDone();
  }
  for (let i = 0; i < Math.min(opts.connections, requests.length); i++) {
    open();
  }
  await done;
  return tally.result(sent, (performance.now() - started) / 1000);
}
