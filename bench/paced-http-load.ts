import { Agent, request } from "node:http";
import { LatencyRecorder } from "./latency.js";
import type { LoadResult } from "./load-result.js";

export interface PacedLoadOptions {
  url: string;
  method: "POST" | "DELETE";
  path: string;
  bodies: readonly string[];
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
 */
export async function runPacedHttpLoad(opts: PacedLoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.maxConnections });
  const target = new URL(opts.path, opts.url);
  const latencies = new LatencyRecorder();
  const failures: Record<string, number> = {};
  const total = Math.min(opts.bodies.length, Math.floor(opts.rate * opts.seconds));
  let ok = 0;
  let errors = 0;
  let sent = 0;
  const fail = (why: string) => {
    errors++;
    failures[why] = (failures[why] ?? 0) + 1;
  };
  const started = performance.now();
  const send = (body: string, due: number): Promise<void> =>
    new Promise((resolve) => {
      const req = request(
        target,
        {
          method: opts.method,
          agent,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on("end", () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              ok++;
              latencies.record(performance.now() - due);
            } else {
              fail(String(status));
            }
            resolve();
          });
        },
      );
      req.on("error", () => {
        fail("transport");
        resolve();
      });
      req.end(body);
    });

  const inFlight: Promise<void>[] = [];
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const dueCount = Math.min(
        total,
        Math.floor(((performance.now() - started) / 1000) * opts.rate),
      );
      while (sent < dueCount) {
        const body = opts.bodies[sent] ?? "";
        inFlight.push(send(body, started + (sent / opts.rate) * 1000));
        sent++;
      }
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
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
