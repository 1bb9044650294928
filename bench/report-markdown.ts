import type { BenchReport, Phase, Series } from "./bench-report.js";
import { peakPhase } from "./peak-phase.js";

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const n = (value: number) => value.toLocaleString("en");

/** How each check series is paced at half its peak. */
const HALF_PEAK_CLIENT: Partial<Record<Series, string>> = {
  "gRPC introspect": "4 HTTP/2 connections",
  "Forward-auth": "≤ 64 connections",
  "Floor check": "≤ 64 connections",
};

const row = (label: string, concurrency: string, p: Phase) =>
  `| ${label} | ${concurrency} | ${n(p.throughput)} | ${fmt(p.p50Ms)} | ${fmt(p.p90Ms)} | ${fmt(p.p99Ms)} | ${p.errors} | ${fmt(p.rssBeforeMb, 0)} → ${fmt(p.rssAfterMb, 0)} | ${fmt(p.redisRoundTrips)} | ${p.serviceCpuUsPerRequest} | ${p.eventLoopCpuUsPerRequest} | ${p.loadGeneratorCpuUsPerRequest} | ${p.redisCpuUsPerRequest} |`;

/** CPU per REST create at its peak over every process of the run, and what the cores allow. */
function cpuBudget(r: BenchReport): string[] {
  const peak = peakPhase(r.phases.filter((p) => p.series === "REST create"));
  const machineUs =
    peak === undefined
      ? 0
      : peak.serviceCpuUsPerRequest + peak.loadGeneratorCpuUsPerRequest + peak.redisCpuUsPerRequest;
  return peak === undefined || machineUs === 0
    ? []
    : [
        `CPU per REST create at its peak (concurrency ${peak.concurrency}), every process of the run: service ${peak.serviceCpuUsPerRequest} + load generator ${peak.loadGeneratorCpuUsPerRequest} + Redis ${peak.redisCpuUsPerRequest} = ${machineUs} µs, so ${r.machine.cpus} cores fully busy would carry at most ${n(Math.round((r.machine.cpus * 1e6) / machineUs))}/s.`,
        "",
      ];
}

/** The service against the floor at the floor's concurrency. */
function floorLines(r: BenchReport): string[] {
  const f = r.floor;
  if (f === undefined) {
    return [];
  }
  const same = r.phases.find((p) => p.series === "REST create" && p.concurrency === f.concurrency);
  return same === undefined
    ? []
    : [
        `Floor: at concurrency ${f.concurrency} a server that does only what every create must (bench/floor-server.ts: node:http, JSON.parse, the verify on the thread pool, one EVALSHA, the JSON answer) serves ${n(f.throughput)}/s = ${fmt(f.throughput / r.verifyCeiling.perSecond)} × the ceiling, with ${f.eventLoopCpuUsPerRequest} µs of event loop per create. The service at the same concurrency: ${n(same.throughput)}/s; its own work beyond the floor (validation, protobuf transcoding, interceptors, request id, log line, metrics, the script's replay, rate, name and live-count checks) costs +${same.eventLoopCpuUsPerRequest - f.eventLoopCpuUsPerRequest} µs of event loop, +${same.serviceCpuUsPerRequest - same.eventLoopCpuUsPerRequest - (f.serviceCpuUsPerRequest - f.eventLoopCpuUsPerRequest)} µs on its other threads and +${same.redisCpuUsPerRequest - f.redisCpuUsPerRequest} µs of Redis per create.`,
        "",
      ];
}

/** The peer comparison: each side's taken run per protocol and concurrency, and both runs' throughput. */
export function peerMarkdown(r: BenchReport): string[] {
  if (r.peer === undefined) {
    return r.peerSkipped === undefined ? [] : [r.peerSkipped, ""];
  }
  const runs = (list: readonly Phase[]) => list.map((p) => n(p.throughput)).join(" / ");
  return [
    `This service vs the Go grpc-gateway peer (\`${r.peer.binary}\`), ${n(r.peer.requests)} pre-signed creates per create run${r.peer.checkSeconds === undefined ? "" : ` (checks: ${r.peer.checkSeconds} s per run on ${n(r.peer.checkTokens ?? 0)} live tokens each side made through its own create)`}, alternating A B A B; the better run of each side is taken (its figures below; "runs": both runs' throughput).`,
    "",
    "| Protocol | Concurrency | Side | Throughput (req/s) | runs | p50 ms | p99 ms | Errors | Service CPU µs / req | Load generator CPU µs / req | Ratio (ours ÷ peer) |",
    "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ...r.peer.points.flatMap((p) => [
      `| ${p.protocol}${p.connections === 1 ? ", 1 connection" : ""} | ${p.concurrency} | this service | ${n(p.oursTaken.throughput)} | ${runs(p.ours)} | ${fmt(p.oursTaken.p50Ms)} | ${fmt(p.oursTaken.p99Ms)} | ${p.ours.reduce((e, x) => e + x.errors, 0)} | ${p.oursTaken.serviceCpuUsPerRequest} | ${p.oursTaken.loadGeneratorCpuUsPerRequest} | ${fmt(p.peerTaken.throughput === 0 ? 0 : p.oursTaken.throughput / p.peerTaken.throughput)} |`,
      `| ${p.protocol}${p.connections === 1 ? ", 1 connection" : ""} | ${p.concurrency} | Go peer | ${n(p.peerTaken.throughput)} | ${runs(p.peer)} | ${fmt(p.peerTaken.p50Ms)} | ${fmt(p.peerTaken.p99Ms)} | ${p.peer.reduce((e, x) => e + x.errors, 0)} | ${p.peerTaken.serviceCpuUsPerRequest} | ${p.peerTaken.loadGeneratorCpuUsPerRequest} | |`,
    ]),
    "",
  ];
}

/** The target table: every target the run measured, and those it did not. */
export function targetsMarkdown(r: BenchReport): string[] {
  return [
    "| Target | Goal | Measured | Met |",
    "|---|---|---|---|",
    ...r.targets.map(
      (t) => `| ${t.name} | ${t.goal} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`,
    ),
    "",
    ...(r.notMeasured.length === 0
      ? []
      : [`Not measured in this run (\`--only\`): ${r.notMeasured.join("; ")}.`, ""]),
  ];
}

/** The results of a run: every phase, the peer comparison, then every target. */
export function reportMarkdown(r: BenchReport): string {
  return [...resultsMarkdown(r), ...targetsMarkdown(r)].join("\n");
}

/** The results of a run without the targets: the machine, every phase, the peer comparison, memory, leak. */
export function resultsMarkdown(r: BenchReport): string[] {
  const checks = r.checks;
  const extraRows = [
    r.halfPeak &&
      row(
        `REST create at half peak (paced, open model; ≤ ${r.halfPeak.concurrency} connections)`,
        "–",
        r.halfPeak,
      ),
    r.floor &&
      row("Floor: REST create against bench/floor-server.ts", String(r.floor.concurrency), r.floor),
    r.floorHalfPeak &&
      row(
        `Floor at half its peak (paced, open model; ≤ ${r.floorHalfPeak.concurrency} connections)`,
        "–",
        r.floorHalfPeak,
      ),
    ...(checks?.halfPeaks ?? []).map((p) =>
      row(
        `${p.series} at half its peak (paced, open model; ${HALF_PEAK_CLIENT[p.series] ?? ""})`,
        "–",
        p,
      ),
    ),
  ].filter((line) => line !== undefined);
  const lines = [
    `Run ${r.date}${r.quick ? " (--quick)" : ""}${r.ran.length > 0 && r.notMeasured.length > 0 ? ` (phases: ${r.ran.join(", ")})` : ""}: ${r.machine.cpus} × ${r.machine.cpuModel}, Node ${r.machine.node}, Redis ${r.machine.redis}. Service: ${(r.machine.workers ?? 1) === 1 ? "one process (WORKERS=1)" : `${r.machine.workers} worker processes (the default, one per core${r.machine.reusePort === true ? ", each on its own SO_REUSEPORT socket" : ", the primary hands connections on"})`}${r.machine.pinned ? " pinned to CPU 0; load generator and Redis on CPU 1" : "; load generator and Redis on the same machine"}.`,
    "",
    `Ceiling: Ed25519 verify on one thread = **${n(r.verifyCeiling.perSecond)}/s** (${r.verifyCeiling.microseconds} µs each).`,
    "",
    "| Protocol | Concurrency | Throughput (req/s) | p50 ms | p90 ms | p99 ms | Errors | RSS before → after (MB) | Redis round trips / req | Service CPU µs / req | Event-loop CPU µs / req | Load generator CPU µs / req | Redis CPU µs / req |",
    "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ...r.phases.map((p) => row(p.series, String(p.concurrency), p)),
    ...extraRows,
    "",
    ...(checks === undefined
      ? []
      : [
          `Token checks: ${n(checks.sessionTokens + checks.namedTokens)} live tokens of ${n(checks.users)} users (${n(checks.sessionTokens)} session, ${n(checks.namedTokens)} named).`,
          "",
        ]),
    ...cpuBudget(r),
    ...floorLines(r),
    ...peerMarkdown(r),
    ...(r.memory === undefined
      ? []
      : [
          `Redis memory per live token (${n(r.memory.users)} users, ${n(r.memory.tokensPerKind)} tokens of each kind): session **${r.memory.sessionBytesPerTokenSteady} B**, named **${r.memory.namedBytesPerTokenSteady} B** (${r.memory.sessionBytesPerToken} B and ${r.memory.namedBytesPerToken} B while the creates' replay entries are still remembered, for 5 minutes).`,
          "",
        ]),
    ...(r.leak === undefined
      ? []
      : [
          `Leak check (REST create, RSS after each step): ${r.leak.requests.map((count, i) => `${(count / 1000).toFixed(0)}k → ${fmt(r.leak?.rssMb[i] ?? 0, 0)} MB`).join(", ")}.`,
          "",
        ]),
  ];
  return lines;
}
