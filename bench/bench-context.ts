import type { Redis } from "ioredis";
import type { TokenStore } from "../src/store/token-store.js";
import type { BenchPlan } from "./bench-plan.js";
import type { BenchReport, Phase, Series } from "./bench-report.js";
import type { BenchUser } from "./bench-users.js";
import type { LoadResult } from "./load-result.js";
import { peakPhase } from "./peak-phase.js";
import type { BenchRedis } from "./redis-server.js";
import type { ServiceProcess } from "./service-process.js";
import type { createSigner } from "./signed-requests.js";

/** What `measure` reads around a load: the measured server's CPU and RSS. */
export type MeasuredServer = Pick<
  ServiceProcess,
  "rssBytes" | "cpuSeconds" | "mainThreadCpuSeconds"
>;

export interface MeasureOptions {
  /** The server under load. Default: the service. */
  server?: MeasuredServer;
  /** The Redis it uses (commandstats, CPU). Default: the bench's Redis. */
  redis?: Redis;
  /** Commands the server sends itself although the token scripts run them too (see roundTripsPerRequest). */
  clientIssued?: ReadonlySet<string>;
}

/** What every phase shares: the plan, the processes, the users, and the results so far. */
export interface BenchContext {
  readonly plan: BenchPlan;
  /** `--pin`: the service (and the peer, and the floors) on CPU 0, the rest on CPU 1. */
  readonly pinned: boolean;
  /**
   * Processes each floor runs as: as many as the service's workers (its
   * default WORKERS) where SO_REUSEPORT lets them share a port (node ≥ 22.12),
   * else one.
   */
  readonly floorProcesses: number;
  log(text: string): void;
  /** Ed25519 verifies per second on one thread, measured first. */
  readonly ceiling: { perSecond: number; microseconds: number };
  readonly redis: BenchRedis;
  /** The service, while the phases that need it run. */
  service(): ServiceProcess;
  readonly users: readonly BenchUser[];
  readonly signer: ReturnType<typeof createSigner>;
  /** The bench's own store: it writes the tokens the delete and check phases use. */
  readonly store: TokenStore;
  /** The token checks' users and their seeded live tokens (seeded on first use). */
  readonly checkUsers: readonly BenchUser[];
  checkTokens(): Promise<readonly string[]>;
  /** The results so far (earlier phases' rows). */
  readonly report: Readonly<Pick<BenchReport, "phases">> & Partial<BenchReport>;
  /** Runs one load with RSS, CPU and Redis command counts around it. */
  measure(
    series: Series,
    concurrency: number,
    run: () => Promise<LoadResult>,
    opts?: MeasureOptions,
  ): Promise<Phase>;
}

/**
 * Measures `series` at each of the plan's concurrencies in turn, adding each
 * row to `phases` as it comes (a load made by `load(c)` may read the rows
 * before it).
 */
export async function measureEach(
  ctx: BenchContext,
  phases: Phase[],
  series: Series,
  load: (concurrency: number) => () => Promise<LoadResult>,
  opts?: MeasureOptions,
): Promise<void> {
  for (const c of ctx.plan.concurrencies) {
    phases.push(await ctx.measure(series, c, load(c), opts));
  }
}

/** Bodies enough for `seconds` at `perSecond`, with headroom; each is sent at most once. */
export const budget = (perSecond: number, seconds: number, concurrency: number) =>
  Math.ceil(perSecond * seconds * 1.3) + 4 * concurrency + 100;

/** Peak throughput of `series` so far (0 when it has not run). */
export const peakOf = (ctx: BenchContext, series: Series) =>
  peakPhase(ctx.report.phases.filter((p) => p.series === series))?.throughput ?? 0;

/**
 * A rate no phase will beat: twice the best so far, earlier phases' rows and
 * `own` (the ceiling before the first), so pre-signing stays proportionate to
 * what the service manages.
 */
export const expectedRate = (ctx: BenchContext, own: readonly Phase[] = []) => {
  const best = Math.max(0, ...[...ctx.report.phases, ...own].map((p) => p.throughput));
  return best === 0 ? ctx.ceiling.perSecond : Math.min(ctx.ceiling.perSecond, 2 * best + 500);
};

/** The phase names, in the order a run takes them. */
export const PHASE_NAMES = [
  "create",
  "delete",
  "half-peak",
  "checks",
  "leak",
  "peer",
  "floor",
  "check-floor",
  "memory",
] as const;
export type PhaseName = (typeof PHASE_NAMES)[number];

/** What a phase adds to the report: its rows, and any result of its own. */
export type PhaseOutput = Partial<Omit<BenchReport, "phases" | "targets" | "notMeasured">> & {
  phases?: Phase[];
};

/** One phase of `npm run bench`. */
export interface BenchPhase {
  readonly name: PhaseName;
  /** Whether it needs the service running (phases that do run first, then the service stops). */
  readonly needsService: boolean;
  /** Phases whose results it needs; `--only` adds them. */
  readonly needs?: readonly PhaseName[];
  run(ctx: BenchContext): Promise<PhaseOutput>;
}
