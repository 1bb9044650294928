import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../gen/health/v1/health_pb.js";
import type { ReadinessProbe } from "./readiness.js";

export interface GrpcHealthOptions {
  ready: ReadinessProbe;
  /** Names of the services served next to it; "" stands for the whole server. */
  services: string[];
  /** How often a Watch stream re-checks. Default 1000 ms. */
  watchIntervalMs?: number;
  /**
   * Aborted when the service starts stopping: every Watch stream is told
   * NOT_SERVING at once (`ready` says so from then on) and is then ended, so
   * that client-side balancers move away and no stream holds the stop.
   * Default: never.
   */
  stopping?: AbortSignal;
}

/** Resolves after `ms`, or as soon as one of `signals` is aborted. */
function sleep(ms: number, signals: readonly AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const signal of signals) {
        signal.removeEventListener("abort", done);
      }
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const signal of signals) {
      signal.addEventListener("abort", done, { once: true });
    }
  });
}

/** The standard grpc.health.v1.Health service: SERVING while Redis answers and the service is not stopping. */
export function createGrpcHealth(opts: GrpcHealthOptions): ServiceImpl<typeof Health> {
  const known = new Set(["", ...opts.services]);
  const interval = opts.watchIntervalMs ?? 1000;
  const status = async () =>
    (await opts.ready()) ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;

  return {
    async check(req) {
      if (!known.has(req.service)) {
        throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      }
      return create(HealthCheckResponseSchema, { status: await status() });
    },

    async list() {
      const current = await status();
      return {
        statuses: Object.fromEntries(
          [...known].map((name) => [name, create(HealthCheckResponseSchema, { status: current })]),
        ),
      };
    },

    async *watch(req, ctx) {
      if (!known.has(req.service)) {
        yield create(HealthCheckResponseSchema, { status: ServingStatus.SERVICE_UNKNOWN });
        return;
      }
      const signals = opts.stopping === undefined ? [ctx.signal] : [ctx.signal, opts.stopping];
      let last: ServingStatus | undefined;
      while (!ctx.signal.aborted) {
        const current = await status();
        if (current !== last) {
          last = current;
          yield create(HealthCheckResponseSchema, { status: current });
        }
        if (opts.stopping?.aborted === true) {
          // Stopping: the watcher is told NOT_SERVING (if the stop came
          // after the status above), then the stream ends, status OK.
          if (last !== ServingStatus.NOT_SERVING) {
            yield create(HealthCheckResponseSchema, { status: ServingStatus.NOT_SERVING });
          }
          return;
        }
        await sleep(interval, signals);
      }
    },
  };
}
