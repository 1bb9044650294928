import { connect, type Socket } from "node:net";
import { LatencyRecorder } from "./latency.js";
import type { LoadResult } from "./load-result.js";

export interface PacedLoadOptions {
  url: string;
  method: "POST" | "DELETE" | "GET";
  path: string;
  bodies: readonly string[];
  /**
   * Instead of bodies: requests without a body, each with
   * `Authorization: Bearer <token>`, the tokens in turn (again from the
   * first when all have been sent).
   */
  bearerTokens?: readonly string[];
  /** Requests per second, evenly spaced. */
  rate: number;
  seconds: number;
  /** Keep-alive connections the requests may use. */
  maxConnections: number;
}

/** How a request on its way ends: the answer's status, or undefined when its connection failed. */
type Done = (status: number | undefined) => void;

const HEADER_END = Buffer.from("\r\n\r\n");
const CONTENT_LENGTH = /^content-length:[ \t]*(\d+)[ \t]*$/im;

/**
 * One HTTP/1.1 keep-alive connection that sends requests and reads their
 * answers, one at a time; the status of each answer, or undefined when the
 * connection failed under it. Enough HTTP for this benchmark's answers,
 * which always carry a content-length (or are 204).
 */
function createConnection(
  host: string,
  port: number,
  on: { idle: (c: Connection) => void; closed: (c: Connection) => void },
) {
  const socket: Socket = connect({ host, port, noDelay: true });
  let pending: Done | undefined;
  let buffered: Buffer = Buffer.alloc(0);
  let closed = false;
  const finish = (status: number | undefined) => {
    const current = pending;
    pending = undefined;
    current?.(status);
  };
  socket.on("data", (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    const headerEnd = buffered.indexOf(HEADER_END);
    if (headerEnd < 0) {
      return;
    }
    const head = buffered.toString("latin1", 0, headerEnd);
    const status = Number(head.slice(9, 12));
    const length = status === 204 ? 0 : Number(CONTENT_LENGTH.exec(head)?.[1] ?? Number.NaN);
    if (!Number.isSafeInteger(length)) {
      socket.destroy(); // Not an answer this client can read; the request fails.
      return;
    }
    const end = headerEnd + HEADER_END.length + length;
    if (buffered.length < end) {
      return;
    }
    buffered = buffered.subarray(end);
    finish(status);
    if (!closed) {
      on.idle(connection);
    }
  });
  socket.on("error", () => socket.destroy());
  socket.on("close", () => {
    closed = true;
    finish(undefined);
    on.closed(connection);
  });
  const connection = {
    send(request: string, done: Done) {
      pending = done;
      socket.write(request);
    },
    close() {
      socket.destroy();
    },
  };
  return connection;
}
type Connection = ReturnType<typeof createConnection>;

/**
 * Open-model load at a fixed rate: request i is due at start + i / rate,
 * whatever happened to the earlier ones. autocannon's rate limit sends each
 * second's quota as fast as it can and then waits, which measures a burst,
 * not a steady half load. Latency counts from when a request was due, so a
 * stalled client or server cannot hide its queueing (no coordinated omission).
 *
 * Requests go over raw keep-alive connections (at most `maxConnections`; a
 * due request waits for a free one): node's HTTP client costs several times
 * the CPU of the request it sends, and on a machine the service shares, a
 * heavy client would show up in the service's latency.
 */
export async function runPacedHttpLoad(opts: PacedLoadOptions): Promise<LoadResult> {
  const target = new URL(opts.path, opts.url);
  const host = target.hostname;
  const port = Number(target.port);
  const requestHead = `${opts.method} ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\n`;
  const tokens = opts.bearerTokens;
  const requestAt = (i: number): string => {
    if (tokens === undefined) {
      const body = opts.bodies[i] ?? "";
      return `${requestHead}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    }
    return `${requestHead}authorization: Bearer ${tokens[i % tokens.length] ?? ""}\r\n\r\n`;
  };
  const latencies = new LatencyRecorder();
  const failures: Record<string, number> = {};
  const total = Math.min(
    tokens === undefined ? opts.bodies.length : Number.POSITIVE_INFINITY,
    Math.floor(opts.rate * opts.seconds),
  );
  let ok = 0;
  let errors = 0;
  let sent = 0;
  let answered = 0;
  const idle: Connection[] = [];
  const waiting: { request: string; due: number }[] = [];
  let open = 0;
  let allAnswered: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    allAnswered = resolve;
  });

  const onAnswer = (due: number) => (status: number | undefined) => {
    if (status === undefined) {
      errors++;
      failures.transport = (failures.transport ?? 0) + 1;
    } else if (status >= 200 && status < 300) {
      ok++;
      latencies.record(performance.now() - due);
    } else {
      errors++;
      failures[String(status)] = (failures[String(status)] ?? 0) + 1;
    }
    answered++;
    if (answered === total) {
      allAnswered();
    }
  };
  const dispatch = (connection: Connection, request: string, due: number) => {
    connection.send(request, onAnswer(due));
  };
  const events = {
    idle(connection: Connection) {
      const next = waiting.shift();
      if (next === undefined) {
        idle.push(connection);
      } else {
        dispatch(connection, next.request, next.due);
      }
    },
    closed(connection: Connection) {
      open--;
      const at = idle.indexOf(connection);
      if (at >= 0) {
        idle.splice(at, 1);
      }
      // A request waiting for a connection gets a new one.
      const next = waiting.shift();
      if (next !== undefined) {
        submit(next.request, next.due);
      }
    },
  };
  const submit = (request: string, due: number) => {
    let connection = idle.pop();
    if (connection === undefined && open < opts.maxConnections) {
      open++;
      connection = createConnection(host, port, events);
    }
    if (connection === undefined) {
      waiting.push({ request, due });
    } else {
      dispatch(connection, request, due);
    }
  };

  const started = performance.now();
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const dueCount = Math.min(
        total,
        Math.floor(((performance.now() - started) / 1000) * opts.rate),
      );
      while (sent < dueCount) {
        submit(requestAt(sent), started + (sent / opts.rate) * 1000);
        sent++;
      }
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  if (total > 0) {
    await finished;
  }
  const seconds = (performance.now() - started) / 1000;
  for (const connection of idle) {
    connection.close();
  }
  const { p50, p90, p99 } = latencies.percentiles();
  return {
    throughput: Math.round(ok / seconds),
    p50Ms: p50,
    p90Ms: p90,
    p99Ms: p99,
    sent,
    ok,
    errors,
    failures,
    seconds: Math.round(seconds * 100) / 100,
  };
}
