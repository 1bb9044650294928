import { type BenchContext, type BenchPhase, measureEach, peakOf } from "../bench-context.js";
import type { Phase, Series } from "../bench-report.js";
import { registerUsers } from "../bench-users.js";
import {
  bearerHttpLoad,
  type CheckLoad,
  introspectFrames,
  introspectLoad,
  PACED_HTTP_CONNECTIONS,
} from "../check-loads.js";
import { peakPhase } from "../peak-phase.js";

/** Half of the peak of `series` so far (earlier phases and `own`), as a paced load. */
export function halfOf(ctx: BenchContext, series: Series, own: readonly Phase[]): CheckLoad {
  const ownPeak = peakPhase(own.filter((p) => p.series === series))?.throughput ?? 0;
  return { rate: Math.max(1, Math.round(Math.max(ownPeak, peakOf(ctx, series)) / 2)) };
}

/** What the checks section of the report says about the seeded tokens. */
export const checksSummary = (ctx: BenchContext, halfPeaks: Phase[]) => ({
  users: ctx.plan.checkUsers,
  sessionTokens: ctx.plan.checkTokens / 2,
  namedTokens: ctx.plan.checkTokens / 2,
  halfPeaks,
});

/**
 * The token checks: IntrospectToken over gRPC (raw HTTP/2 client) and
 * forward-auth over HTTP/1.1 (raw keep-alive client) on the internal listener, against
 * 10,000 seeded live tokens of 1,000 users, at every concurrency (gRPC over
 * 4 connections, then over one), then each
 * paced at half of its own peak.
 */
export const checksPhase: BenchPhase = {
  name: "checks",
  needsService: true,
  async run(ctx) {
    const { plan } = ctx;
    const internalAddress = `127.0.0.1:${ctx.service().internalPort}`;
    const internalUrl = `http://${internalAddress}`;
    await registerUsers(internalUrl, ctx.checkUsers);
    const tokens = await ctx.checkTokens();
    const frames = introspectFrames(tokens);
    await introspectLoad(internalAddress, frames, { concurrency: 32 }, plan.warmupSeconds)();
    await bearerHttpLoad(internalUrl, tokens, { concurrency: 32 }, plan.warmupSeconds)();
    const phases: Phase[] = [];
    await measureEach(ctx, phases, "gRPC introspect", (c) =>
      introspectLoad(internalAddress, frames, { concurrency: c }, plan.seconds),
    );
    // One connection, as a client channel calls: all its calls go to one worker.
    await measureEach(ctx, phases, "gRPC introspect, 1 connection", (c) =>
      introspectLoad(internalAddress, frames, { concurrency: c, connections: 1 }, plan.seconds),
    );
    await measureEach(ctx, phases, "Forward-auth", (c) =>
      bearerHttpLoad(internalUrl, tokens, { concurrency: c }, plan.seconds),
    );
    const introspectHalfPeak = await ctx.measure(
      "gRPC introspect",
      plan.concurrencies[plan.concurrencies.length - 1] ?? 128,
      introspectLoad(internalAddress, frames, halfOf(ctx, "gRPC introspect", phases), plan.seconds),
    );
    const forwardAuthHalfPeak = await ctx.measure(
      "Forward-auth",
      PACED_HTTP_CONNECTIONS,
      bearerHttpLoad(internalUrl, tokens, halfOf(ctx, "Forward-auth", phases), plan.seconds),
    );
    return { phases, checks: checksSummary(ctx, [introspectHalfPeak, forwardAuthHalfPeak]) };
  },
};
