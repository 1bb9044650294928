import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchPhase, budget, measureEach } from "../bench-context.js";
import type { Phase } from "../bench-report.js";
import { answeredWithToken } from "../create-answers.js";
import { LADDER_STEPS } from "../ladder/ladder-steps.js";
import { runPacedHttpLoad } from "../paced-http-load.js";
import { peakPhase } from "../peak-phase.js";
import { startProcessGroup } from "../process-group.js";
import { grpcCreateLoad, restCreateLoad } from "./create.js";

/** The gRPC create floor: the ladder's first valid gRPC step (bench/ladder/ladder-steps.ts). */
const GRPC_CREATE_FLOOR_STEP = LADDER_STEPS["grpc-create"].findIndex((s) => s.layer === "trailers");

/**
 * The create floors, each run as many processes as the service has workers
 * (SO_REUSEPORT, bench/process-group.ts): the same REST create load at every
 * concurrency against a server that does only what every create must
 * (bench/floor-server.ts), then paced at half of its peak; and gRPC create
 * (4 connections, then one) against the gRPC create floor (raw stream,
 * envelope, protobuf decode, the verify, one EVALSHA of the real create
 * script, the answer and its trailers: bench/ladder/ladder-server.ts).
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
    const pin = ctx.pinned ? { cpus: "0" } : {};
    const floorServer = await startProcessGroup(ctx.floorProcesses, {
      redisUrl: ctx.redis.url,
      main: "bench/floor-server.ts",
      env: { FLOOR_KEYS_FILE: floorKeysFile },
      ...pin,
    });
    const grpcFloor = await startProcessGroup(ctx.floorProcesses, {
      redisUrl: ctx.redis.url,
      main: "bench/ladder/ladder-server.ts",
      args: ["--path=grpc-create", `--step=${GRPC_CREATE_FLOOR_STEP}`],
      env: { LADDER_KEYS_FILE: floorKeysFile },
      ...pin,
    });
    const url = `http://127.0.0.1:${floorServer.publicPort}`;
    try {
      const floorLoad = (seconds: number, perSecond: number, connections: number) =>
        restCreateLoad(ctx, connections, seconds, perSecond, {
          publicPort: floorServer.publicPort,
          accept: answeredWithToken,
        });
      const grpcFloorLoad = (
        seconds: number,
        perSecond: number,
        concurrency: number,
        connections: number,
      ) => grpcCreateLoad(ctx, concurrency, seconds, perSecond, connections, grpcFloor.publicPort);
      await floorLoad(plan.warmupSeconds, ctx.ceiling.perSecond, 32)();
      await grpcFloorLoad(plan.warmupSeconds, ctx.ceiling.perSecond, 32, 4)();
      const phases: Phase[] = [];
      await measureEach(
        ctx,
        phases,
        "Floor create",
        (c) => floorLoad(plan.seconds, ctx.ceiling.perSecond, c),
        { server: floorServer },
      );
      for (const [series, connections] of [
        ["Floor gRPC create", 4],
        ["Floor gRPC create, 1 connection", 1],
      ] as const) {
        await measureEach(
          ctx,
          phases,
          series,
          (c) => grpcFloorLoad(plan.seconds, ctx.ceiling.perSecond, c, connections),
          { server: grpcFloor },
        );
      }
      const floor =
        phases.find((p) => p.series === "Floor create" && p.concurrency === restPeakConcurrency) ??
        peakPhase(phases.filter((p) => p.series === "Floor create"));
      const floorHalfRate = Math.round((floor?.throughput ?? 0) / 2);
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
      return { phases, ...(floor === undefined ? {} : { floor }), floorHalfPeak };
    } finally {
      await Promise.allSettled([floorServer.stop(), grpcFloor.stop()]);
      rmSync(floorDir, { recursive: true, force: true });
    }
  },
};
