import type { Phase, Series } from "../../bench/bench-report.js";

/** A bench phase of `series` at `concurrency`: 1000 calls, all answered, unless `fields` say otherwise. */
export function benchPhase(
  series: Series,
  concurrency: number,
  fields: Partial<Phase> = {},
): Phase {
  return {
    series,
    concurrency,
    throughput: 1000,
    p50Ms: 1,
    p90Ms: 2,
    p99Ms: 3,
    sent: 1000,
    ok: 1000,
    errors: 0,
    failures: {},
    seconds: 1,
    rssBeforeMb: 100,
    rssAfterMb: 100,
    redisRoundTrips: 1,
    redisCommands: {},
    serviceCpuUsPerRequest: 100,
    eventLoopCpuUsPerRequest: 80,
    loadGeneratorCpuUsPerRequest: 10,
    redisCpuUsPerRequest: 10,
    ...fields,
  };
}
