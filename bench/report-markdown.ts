import type { BenchReport, Series } from "./bench-report.js";

const fmt = (n: number, digits = 2) => n.toFixed(digits);

/** How each check series is paced at half its peak. */
const HALF_PEAK_CLIENT: Partial<Record<Series, string>> = {
  "gRPC introspect": "4 HTTP/2 connections",
  "Forward-auth": "≤ 64 connections",
  "Floor check": "≤ 64 connections",
};

/** The README table of a run: every phase, then every target. */
export function reportMarkdown(r: BenchReport): string {
  const peak = r.phases
    .filter((p) => p.series === "REST create")
    .reduce<BenchReport["phases"][number] | undefined>(
      (best, p) => (best === undefined || p.throughput > best.throughput ? p : best),
      undefined,
    );
  const machineUs =
    peak === undefined
      ? 0
      : peak.serviceCpuUsPerRequest + peak.loadGeneratorCpuUsPerRequest + peak.redisCpuUsPerRequest;
  const budget =
    peak === undefined || machineUs === 0
      ? []
      : [
          `CPU per REST create at its peak (concurrency ${peak.concurrency}), every process of the run: service ${peak.serviceCpuUsPerRequest} + load generator ${peak.loadGeneratorCpuUsPerRequest} + Redis ${peak.redisCpuUsPerRequest} = ${machineUs} µs, so ${r.machine.cpus} cores fully busy would carry at most ${Math.round((r.machine.cpus * 1e6) / machineUs).toLocaleString("en")}/s.`,
          "",
        ];
  const f = r.floor;
  const same = r.phases.find((p) => p.series === "REST create" && p.concurrency === f.concurrency);
  const floorLines =
    same === undefined
      ? []
      : [
          `Floor (the last two rows): at concurrency ${f.concurrency} a server that does only what every create must (bench/floor-server.ts: node:http, JSON.parse, the verify on the thread pool, one EVALSHA, the JSON answer) serves ${f.throughput.toLocaleString("en")}/s = ${fmt(f.throughput / r.verifyCeiling.perSecond)} × the ceiling, with ${f.eventLoopCpuUsPerRequest} µs of event loop per create. The service at the same concurrency: ${same.throughput.toLocaleString("en")}/s; its own work beyond the floor (validation, protobuf transcoding, interceptors, request id, log line, metrics, the script's replay, rate, name and live-count checks) costs +${same.eventLoopCpuUsPerRequest - f.eventLoopCpuUsPerRequest} µs of event loop, +${same.serviceCpuUsPerRequest - same.eventLoopCpuUsPerRequest - (f.serviceCpuUsPerRequest - f.eventLoopCpuUsPerRequest)} µs on its other threads and +${same.redisCpuUsPerRequest - f.redisCpuUsPerRequest} µs of Redis per create.`,
          "",
        ];
  const row = (label: string, concurrency: string, p: BenchReport["halfPeak"]) =>
    `| ${label} | ${concurrency} | ${p.throughput.toLocaleString("en")} | ${fmt(p.p50Ms)} | ${fmt(p.p90Ms)} | ${fmt(p.p99Ms)} | ${p.errors} | ${fmt(p.rssBeforeMb, 0)} → ${fmt(p.rssAfterMb, 0)} | ${fmt(p.redisRoundTrips)} | ${p.serviceCpuUsPerRequest} | ${p.eventLoopCpuUsPerRequest} | ${p.loadGeneratorCpuUsPerRequest} | ${p.redisCpuUsPerRequest} |`;
  const lines = [
    `Run ${r.date}${r.quick ? " (--quick)" : ""}: ${r.machine.cpus} × ${r.machine.cpuModel}, Node ${r.machine.node}, Redis ${r.machine.redis}. Service: one process (WORKERS=1)${r.machine.pinned ? " pinned to CPU 0; load generator and Redis on CPU 1" : "; load generator and Redis on the same machine"}.`,
    "",
    `Ceiling: Ed25519 verify on one thread = **${r.verifyCeiling.perSecond.toLocaleString("en")}/s** (${r.verifyCeiling.microseconds} µs each).`,
    "",
    "| Protocol | Concurrency | Throughput (req/s) | p50 ms | p90 ms | p99 ms | Errors | RSS before → after (MB) | Redis round trips / req | Service CPU µs / req | Event-loop CPU µs / req | Load generator CPU µs / req | Redis CPU µs / req |",
    "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ...r.phases.map((p) => row(p.series, String(p.concurrency), p)),
    row(
      `REST create at half peak (paced, open model; ≤ ${r.halfPeak.concurrency} connections)`,
      "–",
      r.halfPeak,
    ),
    row("Floor: REST create against bench/floor-server.ts", String(f.concurrency), f),
    row(
      `Floor at half its peak (paced, open model; ≤ ${r.floorHalfPeak.concurrency} connections)`,
      "–",
      r.floorHalfPeak,
    ),
    ...r.checks.halfPeaks.map((p) =>
      row(
        `${p.series} at half its peak (paced, open model; ${HALF_PEAK_CLIENT[p.series] ?? ""})`,
        "–",
        p,
      ),
    ),
    "",
    `Token checks (gRPC introspect, Forward-auth, Floor check): ${(r.checks.sessionTokens + r.checks.namedTokens).toLocaleString("en")} live tokens of ${r.checks.users.toLocaleString("en")} users (${r.checks.sessionTokens.toLocaleString("en")} session, ${r.checks.namedTokens.toLocaleString("en")} named), written through the real store code and checked in turn; only an active answer (200, \`active: true\`) counts as a success. IntrospectToken: a raw node:http2 gRPC client, pre-framed requests over 4 connections (bench/raw-grpc-load.ts); forward-auth (\`GET /auth\` on the internal listener) and the check floor (bench/check-floor-server.ts: node:http, one Redis GET of the token's key, nothing else): autocannon, HTTP/1.1 keep-alive. Floor check gRPC: the same floor over h2c gRPC with IntrospectToken's client, at IntrospectToken's peak concurrency, for information (it has no target): what node:http2 and gRPC framing cost before any service code.`,
    ...budget,
    ...floorLines,
    `Redis memory per live token (${r.memory.users.toLocaleString("en")} users, ${r.memory.tokensPerKind.toLocaleString("en")} tokens of each kind): session **${r.memory.sessionBytesPerTokenSteady} B**, named **${r.memory.namedBytesPerTokenSteady} B** (${r.memory.sessionBytesPerToken} B and ${r.memory.namedBytesPerToken} B while the creates' replay entries are still remembered, for 5 minutes).`,
    "",
    `Leak check (REST create, RSS after each step): ${r.leak.requests.map((n, i) => `${(n / 1000).toFixed(0)}k → ${fmt(r.leak.rssMb[i] ?? 0, 0)} MB`).join(", ")}.`,
    "",
    "| Target | Goal | Measured | Met |",
    "|---|---|---|---|",
    ...r.targets.map(
      (t) => `| ${t.name} | ${t.goal} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`,
    ),
    "",
  ];
  return lines.join("\n");
}
