import { type BenchPhase, budget } from "../bench-context.js";
import type { Phase } from "../bench-report.js";
import { runRawHttpLoad } from "../raw-http-load.js";
import { seedTokens } from "../seed-tokens.js";

/**
 * REST delete at every concurrency, of tokens the bench's store writes first:
 * as many as REST create managed at that concurrency (the ceiling when the
 * create phase did not run), with headroom.
 */
export const deletePhase: BenchPhase = {
  name: "delete",
  needsService: true,
  async run(ctx) {
    const { plan } = ctx;
    const publicUrl = `http://127.0.0.1:${ctx.service().publicPort}`;
    const phases: Phase[] = [];
    for (const c of plan.concurrencies) {
      const createRate = ctx.report.phases.find(
        (p) => p.series === "REST create" && p.concurrency === c,
      );
      const tokens = await seedTokens({
        store: ctx.store,
        users: ctx.users,
        count: budget(createRate?.throughput ?? ctx.ceiling.perSecond, plan.seconds, c),
        named: false,
        lifetimeMs: 3_600_000,
      });
      const bodies = ctx.signer.deletes(tokens).map((r) => r.json);
      phases.push(
        await ctx.measure("REST delete", c, () =>
          runRawHttpLoad({
            url: publicUrl,
            method: "DELETE",
            path: "/user/tokens",
            bodies,
            connections: c,
            seconds: plan.seconds,
          }),
        ),
      );
    }
    return { phases };
  },
};
