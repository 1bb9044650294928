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
}

/** The standard grpc.health.v1.Health service: SERVING while Redis answers. */
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
      let last: ServingStatus | undefined;
      while (!ctx.signal.aborted) {
        const current = await status();
        if (current !== last) {
          last = current;
          yield create(HealthCheckResponseSchema, { status: current });
        }
        await new Promise((resolve) => setTimeout(resolve, interval));
      }
    },
  };
}
