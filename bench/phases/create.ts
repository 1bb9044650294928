import {
  type BenchContext,
  type BenchPhase,
  budget,
  expectedRate,
  measureEach,
} from "../bench-context.js";
import type { Phase } from "../bench-report.js";
import { answeredWithToken, grpcCreated, restCreated } from "../create-answers.js";
import { grpcFrame } from "../grpc-frame.js";
import { runRawGrpcLoad } from "../raw-grpc-load.js";
import { runRawHttpLoad } from "../raw-http-load.js";

export const CREATE_PATH = "/perps.token.v1.TokenService/CreateToken";

/** A server a create load is aimed at, and what counts as its answer with a token. */
export interface CreateTarget {
  publicPort: number;
  accept: (status: number, body: Buffer) => boolean;
}

/**
 * REST create against the service (or another `target`): the raw HTTP/1.1
 * client (autocannon cost more than a fifth of the service's CPU per create),
 * pre-signed bodies; only 201 with a token counts.
 */
export function restCreateLoad(
  ctx: BenchContext,
  concurrency: number,
  seconds: number,
  perSecond: number,
  target: CreateTarget = { publicPort: ctx.service().publicPort, accept: restCreated },
) {
  const bodies = ctx.signer.creates(budget(perSecond, seconds, concurrency)).map((r) => r.json);
  const url = `http://127.0.0.1:${target.publicPort}`;
  return () =>
    runRawHttpLoad({
      url,
      method: "POST",
      path: "/user/tokens",
      bodies,
      connections: concurrency,
      seconds,
      accept: target.accept,
    });
}

/**
 * gRPC create against the service's public listener (or another server's
 * `publicPort`): pre-framed requests over raw HTTP/2 streams on `connections`
 * (default 4) (bench/raw-grpc-load.ts), each sent once; only grpc-status 0
 * with a message counts.
 */
export function grpcCreateLoad(
  ctx: BenchContext,
  concurrency: number,
  seconds: number,
  perSecond: number,
  connections = 4,
  publicPort = ctx.service().publicPort,
) {
  const frames = ctx.signer
    .creates(budget(perSecond, seconds, concurrency))
    .map((r) => grpcFrame(r.binary));
  const address = `127.0.0.1:${publicPort}`;
  return () =>
    runRawGrpcLoad({
      address,
      path: CREATE_PATH,
      frames,
      once: true,
      concurrency,
      connections,
      seconds,
      accept: grpcCreated,
    });
}

/**
 * Creates at every concurrency: REST and Connect JSON (the raw HTTP/1.1
 * client, keep-alive, one request in flight per connection) and gRPC (the raw
 * HTTP/2 client), after a warm-up (JIT, connection pools,
 * Redis' script cache) that is not reported.
 */
export const createPhase: BenchPhase = {
  name: "create",
  needsService: true,
  async run(ctx) {
    const { plan } = ctx;
    const service = ctx.service();
    const publicUrl = `http://127.0.0.1:${service.publicPort}`;
    const phases: Phase[] = [];
    await restCreateLoad(ctx, 32, plan.warmupSeconds, ctx.ceiling.perSecond)();
    await grpcCreateLoad(ctx, 32, Math.min(1, plan.warmupSeconds), ctx.ceiling.perSecond)();
    await measureEach(ctx, phases, "REST create", (c) =>
      restCreateLoad(ctx, c, plan.seconds, expectedRate(ctx, phases)),
    );
    await measureEach(ctx, phases, "Connect create", (c) => {
      const bodies = ctx.signer
        .creates(budget(expectedRate(ctx, phases), plan.seconds, c))
        .map((r) => r.json);
      return () =>
        runRawHttpLoad({
          url: publicUrl,
          method: "POST",
          path: CREATE_PATH,
          bodies,
          connections: c,
          seconds: plan.seconds,
          accept: answeredWithToken,
        });
    });
    await measureEach(ctx, phases, "gRPC create", (c) =>
      grpcCreateLoad(ctx, c, plan.seconds, expectedRate(ctx, phases)),
    );
    // One connection, as a client channel calls: all its calls go to one worker.
    await measureEach(ctx, phases, "gRPC create, 1 connection", (c) =>
      grpcCreateLoad(ctx, c, plan.seconds, expectedRate(ctx, phases), 1),
    );
    return { phases };
  },
};
