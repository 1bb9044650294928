import { type BenchPhase, budget, peakOf } from "../bench-context.js";
import { runPacedHttpLoad } from "../paced-http-load.js";

/**
 * REST create paced at half of its peak (open model, bench/paced-http-load.ts,
 * at most 64 connections): the tail at a load the service should carry easily.
 */
export const halfPeakPhase: BenchPhase = {
  name: "half-peak",
  needsService: true,
  needs: ["create"],
  async run(ctx) {
    const { plan } = ctx;
    const halfRate = Math.round(peakOf(ctx, "REST create") / 2);
    const bodies = ctx.signer.creates(budget(halfRate, plan.seconds, 64)).map((r) => r.json);
    const halfPeak = await ctx.measure("REST create", 64, () =>
      runPacedHttpLoad({
        url: `http://127.0.0.1:${ctx.service().publicPort}`,
        method: "POST",
        path: "/user/tokens",
        bodies,
        rate: halfRate,
        seconds: plan.seconds,
        maxConnections: 64,
      }),
    );
    return { halfPeak };
  },
};
