import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchPhase, budget } from "../bench-context.js";
import { answeredWithToken } from "../create-answers.js";
import { runPacedHttpLoad } from "../paced-http-load.js";
import { peakPhase } from "../peak-phase.js";
import { runRawHttpLoad } from "../raw-http-load.js";
import { startServiceProcess } from "../service-process.js";

/**
 * The floor: the same REST create load, at the concurrency of the REST create
 * peak (32 when the create phase did not run), against a server that does
 * only what every create must (bench/floor-server.ts), then paced at half of
 * its peak: how much of the service's tail this machine and runtime would
 * show anyway.
 */
export const floorPhase: BenchPhase = {
  name: "floor",
  needsService: false,
  async run(ctx) {
    const { plan } = ctx;
    const restPeakConcurrency =
      peakPhase(ctx.report.phases.filter((p) => p.series === "REST create"))?.concurrency ?? 32;
    const floorDir = mkdtempSync(join(tmpdir(), "perps-bench-floor-"));
    const floorKeysFile = join(floorDir, "keys.json");
    writeFileSync(
      floorKeysFile,
      JSON.stringify(Object.fromEntries(ctx.users.map((u) => [u.userId, u.publicKeyHex]))),
    );
    const floorServer = await startServiceProcess({
      redisUrl: ctx.redis.url,
      main: "bench/floor-server.ts",
      env: { FLOOR_KEYS_FILE: floorKeysFile },
      ...(ctx.pinned ? { cpus: "0" } : {}),
    });
    const url = `http://127.0.0.1:${floorServer.httpPort}`;
    try {
      const floorLoad = (seconds: number, perSecond: number) => {
        const bodies = ctx.signer
          .creates(budget(perSecond, seconds, restPeakConcurrency))
          .map((r) => r.json);
        return () =>
          runRawHttpLoad({
            url,
            method: "POST",
            path: "/user/tokens",
            bodies,
            connections: restPeakConcurrency,
            seconds,
            accept: answeredWithToken,
          });
      };
      await floorLoad(plan.warmupSeconds, ctx.ceiling.perSecond)();
      const floor = await ctx.measure(
        "Floor create",
        restPeakConcurrency,
        floorLoad(plan.seconds, ctx.ceiling.perSecond),
        { server: floorServer },
      );
      const floorHalfRate = Math.round(floor.throughput / 2);
      const halfBodies = ctx.signer
        .creates(budget(floorHalfRate, plan.seconds, 64))
        .map((r) => r.json);
      const floorHalfPeak = await ctx.measure(
        "Floor create",
        64,
        () =>
          runPacedHttpLoad({
            url,
            method: "POST",
            path: "/user/tokens",
            bodies: halfBodies,
            rate: floorHalfRate,
            seconds: plan.seconds,
            maxConnections: 64,
          }),
        { server: floorServer },
      );
      return { floor, floorHalfPeak };
    } finally {
      await floorServer.stop();
      rmSync(floorDir, { recursive: true, force: true });
    }
  },
};
