import type { BenchPhase } from "../bench-context.js";
import { measureEach } from "../bench-context.js";
import type { Phase } from "../bench-report.js";
import {
  bearerHttpLoad,
  introspectFrames,
  introspectLoad,
  PACED_HTTP_CONNECTIONS,
} from "../check-loads.js";
import { startProcessGroup } from "../process-group.js";
import { checksSummary, halfOf } from "./checks.js";

/**
 * The check floor: forward-auth's loads against a server that does only one
 * GET of the token's key (bench/check-floor-server.ts; its GET is its own
 * command, not a script's), and the same floor over h2c gRPC with
 * IntrospectToken's client (4 connections, then one), at every concurrency.
 * It runs as many processes as the service has workers, each on its own
 * SO_REUSEPORT socket, so that service ÷ floor compares like with like.
 */
export const checkFloorPhase: BenchPhase = {
  name: "check-floor",
  needsService: false,
  async run(ctx) {
    const { plan } = ctx;
    const tokens = await ctx.checkTokens();
    const checkFloor = await startProcessGroup(ctx.floorProcesses, {
      redisUrl: ctx.redis.url,
      main: "bench/check-floor-server.ts",
      ...(ctx.pinned ? { cpus: "0" } : {}),
    });
    const url = `http://127.0.0.1:${checkFloor.publicPort}`;
    const grpcAddress = `127.0.0.1:${checkFloor.internalPort}`;
    const frames = introspectFrames(tokens);
    const opts = { server: checkFloor, clientIssued: new Set(["get"]) };
    try {
      await bearerHttpLoad(url, tokens, { concurrency: 32 }, plan.warmupSeconds)();
      await introspectLoad(grpcAddress, frames, { concurrency: 32 }, plan.warmupSeconds)();
      const phases: Phase[] = [];
      await measureEach(
        ctx,
        phases,
        "Floor check",
        (c) => bearerHttpLoad(url, tokens, { concurrency: c }, plan.seconds),
        opts,
      );
      for (const [series, connections] of [
        ["Floor check gRPC", 4],
        ["Floor check gRPC, 1 connection", 1],
      ] as const) {
        await measureEach(
          ctx,
          phases,
          series,
          (c) => introspectLoad(grpcAddress, frames, { concurrency: c, connections }, plan.seconds),
          opts,
        );
      }
      const checkFloorHalfPeak = await ctx.measure(
        "Floor check",
        PACED_HTTP_CONNECTIONS,
        bearerHttpLoad(url, tokens, halfOf(ctx, "Floor check", phases), plan.seconds),
        opts,
      );
      return { phases, checks: checksSummary(ctx, [checkFloorHalfPeak]) };
    } finally {
      await checkFloor.stop();
    }
  },
};
