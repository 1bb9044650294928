import type { BenchPhase } from "../bench-context.js";
import type { BenchReport } from "../bench-report.js";
import { restCreated } from "../create-answers.js";
import { runRawHttpLoad } from "../raw-http-load.js";

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** REST creates in equal steps, the service's RSS after each (signing between steps, not during). */
export const leakPhase: BenchPhase = {
  name: "leak",
  needsService: true,
  async run(ctx) {
    const { plan } = ctx;
    const service = ctx.service();
    const leak: NonNullable<BenchReport["leak"]> = { requests: [], rssMb: [] };
    for (let step = 1; step <= plan.leakSteps; step++) {
      const bodies = ctx.signer.creates(plan.leakStepRequests).map((r) => r.json);
      const result = await runRawHttpLoad({
        url: `http://127.0.0.1:${service.publicPort}`,
        method: "POST",
        path: "/user/tokens",
        bodies,
        connections: plan.leakConcurrency,
        accept: restCreated,
      });
      if (result.errors > 0) {
        ctx.log(`leak step ${step}: ${result.errors} errors ${JSON.stringify(result.failures)}`);
      }
      leak.requests.push(step * plan.leakStepRequests);
      leak.rssMb.push(mb(service.rssBytes()));
    }
    ctx.log(`leak: ${leak.requests.map((n, i) => `${n} → ${leak.rssMb[i]} MB`).join(", ")}`);
    return { leak };
  },
};
