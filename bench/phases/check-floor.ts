import type { BenchPhase } from "../bench-context.js";
import type { Phase } from "../bench-report.js";
import {
  bearerHttpLoad,
  introspectFrames,
  introspectLoad,
  PACED_HTTP_CONNECTIONS,
} from "../check-loads.js";
import { peakPhase } from "../peak-phase.js";
import { startServiceProcess } from "../service-process.js";
import { checksSummary, halfOf } from "./checks.js";

/**
 * The check floor: forward-auth's loads against a server that does only one
 * GET of the token's key (bench/check-floor-server.ts; its GET is its own
 * command, not a script's), and, for information, the same floor over h2c
 * gRPC with IntrospectToken's client at IntrospectToken's peak concurrency.
 */
export const checkFloorPhase: BenchPhase = {
  name: "check-floor",
  needsService: false,
  async run(ctx) {
    const { plan } = ctx;
    const tokens = await ctx.checkTokens();
    const checkFloor = await startServiceProcess({
      redisUrl: ctx.redis.url,
      main: "bench/check-floor-server.ts",
      ...(ctx.pinned ? { cpus: "0" } : {}),
    });
    const url = `http://127.0.0.1:${checkFloor.httpPort}`;
    const opts = { server: checkFloor, clientIssued: new Set(["get"]) };
    try {
      await bearerHttpLoad(url, tokens, { concurrency: 32 }, plan.warmupSeconds)();
      const phases: Phase[] = [];
      for (const c of plan.concurrencies) {
        phases.push(
          await ctx.measure(
            "Floor check",
            c,
            bearerHttpLoad(url, tokens, { concurrency: c }, plan.seconds),
            opts,
          ),
        );
      }
      const introspectPeakConcurrency =
        peakPhase(ctx.report.phases.filter((p) => p.series === "gRPC introspect"))?.concurrency ??
        32;
      phases.push(
        await ctx.measure(
          "Floor check gRPC",
          introspectPeakConcurrency,
          introspectLoad(
            `127.0.0.1:${checkFloor.grpcPort}`,
            introspectFrames(tokens),
            { concurrency: introspectPeakConcurrency },
            plan.seconds,
          ),
          opts,
        ),
      );
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
