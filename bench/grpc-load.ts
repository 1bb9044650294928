import * as grpc from "@grpc/grpc-js";
import { LatencyRecorder } from "./latency.js";
import type { LoadResult } from "./load-result.js";

export interface GrpcLoadOptions {
  address: string;
  /** Full method path, e.g. /perps.token.v1.TokenService/CreateToken. */
  path: string;
  /** Pre-encoded request messages, each sent at most once. */
  messages: readonly Uint8Array[];
  /** Calls in flight at once, over one HTTP/2 connection (as a gRPC client does). */
  concurrency: number;
  seconds: number;
}

const identity = (bytes: Buffer): Buffer => bytes;

/**
 * A @grpc/grpc-js client loop: `concurrency` callers, each starting its next
 * unary call when the previous one answers. Messages are pre-encoded so the
 * client spends no time in protobuf.
 */
export async function runGrpcLoad(opts: GrpcLoadOptions): Promise<LoadResult> {
  const client = new grpc.Client(opts.address, grpc.credentials.createInsecure());
  await new Promise<void>((resolve, reject) =>
    client.waitForReady(Date.now() + 5000, (err) => (err === undefined ? resolve() : reject(err))),
  );
  const latencies = new LatencyRecorder();
  const failures: Record<string, number> = {};
  let next = 0;
  let ok = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;

  const call = (message: Uint8Array): Promise<void> =>
    new Promise((resolve) => {
      const sent = performance.now();
      client.makeUnaryRequest(
        opts.path,
        identity,
        identity,
        Buffer.from(message.buffer, message.byteOffset, message.byteLength),
        { deadline: Date.now() + 10_000 },
        (err) => {
          if (err === null) {
            ok++;
            latencies.record(performance.now() - sent);
          } else {
            errors++;
            const code = grpc.status[err.code] ?? String(err.code);
            failures[code] = (failures[code] ?? 0) + 1;
          }
          resolve();
        },
      );
    });

  const caller = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const message = opts.messages[next++];
      if (message === undefined) {
        return;
      }
      await call(message);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, caller));
  const seconds = (performance.now() - started) / 1000;
  client.close();
  const { p50, p90, p99 } = latencies.percentiles();
  return {
    throughput: Math.round(ok / seconds),
    p50Ms: p50,
    p90Ms: p90,
    p99Ms: p99,
    sent: ok + errors,
    ok,
    errors,
    failures,
    seconds: Math.round(seconds * 100) / 100,
  };
}
