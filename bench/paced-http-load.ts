import type { HttpLoadRequests } from "./http-load-requests.js";
import { LatencyRecorder } from "./latency.js";
import type { LoadResult } from "./load-result.js";
import { connectRawHttp, type RawHttpConnection } from "./raw-http-connection.js";

export interface PacedLoadOptions extends HttpLoadRequests {
  /** Requests per second, evenly spaced. */
  rate: number;
  seconds: number;
  /** Keep-alive connections the requests may use. */
  maxConnections: number;
}

/**
 * Open-model load at a fixed rate: request i is due at start + i / rate,
 * whatever happened to the earlier ones. autocannon's rate limit sends each
 * second's quota as fast as it can and then waits, which measures a burst,
 * not a steady half load. Latency counts from when a request was due, so a
 * stalled client or server cannot hide its queueing (no coordinated omission).
 *
 * Requests go over raw keep-alive connections (bench/raw-http-connection.ts;
 * at most `maxConnections`, a due request waits for a free one).
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
  const idle: RawHttpConnection[] = [];
  const waiting: { request: string; due: number }[] = [];
  let open = 0;
  let allAnswered: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    allAnswered = resolve;
  });

  const onAnswer = (due: number) => (status: number | undefined, _body: Buffer) => {
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
  const dispatch = (connection: RawHttpConnection, request: string, due: number) => {
    connection.send(request, onAnswer(due));
  };
  const events = {
    idle(connection: RawHttpConnection) {
      const next = waiting.shift();
      if (next === undefined) {
        idle.push(connection);
      } else {
        dispatch(connection, next.request, next.due);
      }
    },
    closed(connection: RawHttpConnection) {
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
    let connection: RawHttpConnection | undefined = idle.pop();
    if (connection === undefined && open < opts.maxConnections) {
      open++;
      connection = connectRawHttp(host, port, events);
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
