import { connect, type Socket } from "node:net";

/**
 * How a request on its way ends: the answer's status and body, or
 * undefined when its connection failed (or sent what this client cannot read).
 */
export type RawHttpDone = (status: number | undefined, body: Buffer) => void;

export interface RawHttpConnection {
  /** Sends one whole request (head and body); one at a time per connection. */
  send(request: string | Buffer, done: RawHttpDone): void;
  close(): void;
}

const HEADER_END = Buffer.from("\r\n\r\n");
const CRLF = Buffer.from("\r\n");
const CONTENT_LENGTH = /^content-length:[ \t]*(\d+)[ \t]*$/im;
const CHUNKED = /^transfer-encoding:[ \t]*chunked[ \t]*$/im;
const EMPTY = Buffer.alloc(0);

/**
 * The end of a chunked body that starts at `from`, with the body's data, or
 * undefined while it is incomplete (trailer fields are skipped).
 */
function chunkedBody(buffered: Buffer, from: number): { end: number; body: Buffer } | undefined {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = buffered.indexOf(CRLF, at);
    if (lineEnd < 0) {
      return undefined;
    }
    const size = Number.parseInt(buffered.toString("latin1", at, lineEnd), 16);
    if (!Number.isSafeInteger(size)) {
      throw new Error("bad chunk size");
    }
    at = lineEnd + 2;
    if (size === 0) {
      const end = buffered.indexOf(HEADER_END, at - 2);
      return end < 0 ? undefined : { end: end + 4, body: Buffer.concat(parts) };
    }
    if (buffered.length < at + size + 2) {
      return undefined;
    }
    parts.push(buffered.subarray(at, at + size));
    at += size + 2;
  }
}

/**
 * One HTTP/1.1 keep-alive connection on a bare socket that sends requests and
 * reads their answers, one at a time: enough HTTP for the answers the bench
 * meets (a content-length, chunked, or 204). Node's HTTP client costs several
 * times the CPU of the request it sends; on a machine the service shares, a
 * heavy client would show in the service's figures.
 */
export function connectRawHttp(
  host: string,
  port: number,
  on: { idle(c: RawHttpConnection): void; closed(c: RawHttpConnection): void },
): RawHttpConnection {
  const socket: Socket = connect({ host, port, noDelay: true });
  let pending: RawHttpDone | undefined;
  let buffered: Buffer = EMPTY;
  let closed = false;
  const finish = (status: number | undefined, body: Buffer) => {
    const current = pending;
    pending = undefined;
    current?.(status, body);
  };
  socket.on("data", (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    const headerEnd = buffered.indexOf(HEADER_END);
    if (headerEnd < 0) {
      return;
    }
    const head = buffered.toString("latin1", 0, headerEnd);
    const status = Number(head.slice(9, 12));
    const bodyStart = headerEnd + HEADER_END.length;
    let end: number;
    let body: Buffer;
    const contentLength = CONTENT_LENGTH.exec(head)?.[1];
    if (status === 204) {
      end = bodyStart;
      body = EMPTY;
    } else if (contentLength !== undefined) {
      end = bodyStart + Number(contentLength);
      if (buffered.length < end) {
        return;
      }
      body = buffered.subarray(bodyStart, end);
    } else if (CHUNKED.test(head)) {
      let chunked: ReturnType<typeof chunkedBody>;
      try {
        chunked = chunkedBody(buffered, bodyStart);
      } catch {
        socket.destroy(); // Not an answer this client can read; the request fails.
        return;
      }
      if (chunked === undefined) {
        return;
      }
      ({ end, body } = chunked);
    } else {
      socket.destroy();
      return;
    }
    buffered = buffered.length === end ? EMPTY : buffered.subarray(end);
    finish(status, body);
    if (!closed) {
      on.idle(connection);
    }
  });
  socket.on("error", () => socket.destroy());
  socket.on("close", () => {
    closed = true;
    finish(undefined, EMPTY);
    on.closed(connection);
  });
  const connection: RawHttpConnection = {
    send(request, done) {
      pending = done;
      socket.write(request);
    },
    close() {
      socket.destroy();
    },
  };
  return connection;
}
