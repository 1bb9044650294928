import type { BenchReport, Phase, Series } from "./bench-report.js";

type SeriesColors = readonly { series: Series; color: string }[];

/** The line colour of each charted series (d3's category10). */
const COLORS = {
  "REST create": "#1f77b4",
  "Connect create": "#ff7f0e",
  "gRPC create": "#2ca02c",
  "gRPC introspect": "#d62728",
  "REST delete": "#9467bd",
  "Forward-auth": "#8c564b",
  "Floor check": "#7f7f7f",
  "Floor check gRPC": "#bcbd22",
} as const satisfies Partial<Record<Series, string>>;

const colored = (series: readonly (keyof typeof COLORS)[]): SeriesColors =>
  series.map((s) => ({ series: s, color: COLORS[s] }));

/** The chart's two rows: creates and deletes, then token checks (each row on its own scale). */
const ROWS: readonly { title: string; series: SeriesColors }[] = [
  {
    title: "Creates and deletes: ",
    series: colored(["REST create", "Connect create", "gRPC create", "REST delete"]),
  },
  {
    title: "Token checks: ",
    series: colored(["gRPC introspect", "Forward-auth", "Floor check", "Floor check gRPC"]),
  },
];
const W = 420;
const H = 260;
const M = { left: 60, right: 16, top: 30, bottom: 40 };

function xmlText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
}

/** Height of one row: two panels and their legend. */
const ROW_H = H + 28;

/** One panel: `value` of every series of `row` against concurrency (log2 axis). */
function panel(
  r: BenchReport,
  row: SeriesColors,
  x0: number,
  y0: number,
  title: string,
  value: (p: Phase) => number,
  unit: string,
) {
  const shown = r.phases.filter((p) => row.some((s) => s.series === p.series));
  if (shown.length === 0) {
    return `<g transform="translate(0 ${y0})"></g>`;
  }
  const cs = shown.map((p) => p.concurrency);
  const minC = Math.min(...cs);
  const maxC = Math.max(...cs);
  const maxV = Math.max(1, ...shown.map(value)) * 1.1;
  const px = (c: number) =>
    x0 +
    M.left +
    ((Math.log2(c) - Math.log2(minC)) / Math.max(1, Math.log2(maxC / minC))) *
      (W - M.left - M.right);
  const py = (v: number) => M.top + (1 - v / maxV) * (H - M.top - M.bottom);
  const out: string[] = [
    `<text x="${x0 + W / 2}" y="18" text-anchor="middle" font-weight="bold">${xmlText(title)}</text>`,
    `<line x1="${x0 + M.left}" y1="${py(0)}" x2="${x0 + W - M.right}" y2="${py(0)}" stroke="#888"/>`,
    `<line x1="${x0 + M.left}" y1="${M.top}" x2="${x0 + M.left}" y2="${py(0)}" stroke="#888"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (maxV * i) / 4;
    out.push(
      `<text x="${x0 + M.left - 6}" y="${py(v) + 4}" text-anchor="end" font-size="10">${v >= 100 ? Math.round(v) : v.toFixed(1)}</text>`,
      `<line x1="${x0 + M.left}" y1="${py(v)}" x2="${x0 + W - M.right}" y2="${py(v)}" stroke="#eee"/>`,
    );
  }
  for (const c of [...new Set(cs)]) {
    out.push(
      `<text x="${px(c)}" y="${H - M.bottom + 14}" text-anchor="middle" font-size="10">${c}</text>`,
    );
  }
  out.push(
    `<text x="${x0 + W / 2}" y="${H - 6}" text-anchor="middle" font-size="11">concurrency</text>`,
    `<text x="${x0 + 14}" y="${H / 2}" text-anchor="middle" font-size="11" transform="rotate(-90 ${x0 + 14} ${H / 2})">${xmlText(unit)}</text>`,
  );
  for (const { series, color } of row) {
    const points = r.phases
      .filter((p) => p.series === series)
      .sort((a, b) => a.concurrency - b.concurrency);
    if (points.length === 0) continue;
    const d = points
      .map((p) => `${px(p.concurrency).toFixed(1)},${py(value(p)).toFixed(1)}`)
      .join(" ");
    out.push(`<polyline points="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const p of points) {
      out.push(
        `<circle cx="${px(p.concurrency).toFixed(1)}" cy="${py(value(p)).toFixed(1)}" r="3" fill="${color}"/>`,
      );
    }
  }
  return `<g transform="translate(0 ${y0})">\n${out.join("\n")}\n</g>`;
}

/** Throughput and p99 latency against concurrency, one line per protocol; creates, then checks. */
export function reportSvg(r: BenchReport): string {
  const rows = ROWS.map(({ title, series }, i) => {
    const y0 = i * ROW_H;
    const legend = series
      .map(
        ({ series, color }, j) =>
          `<rect x="${M.left + j * 150}" y="${y0 + H + 8}" width="12" height="12" fill="${color}"/><text x="${M.left + j * 150 + 18}" y="${y0 + H + 18}" font-size="12">${series}</text>`,
      )
      .join("\n");
    return [
      panel(r, series, 0, y0, `${title}throughput`, (p) => p.throughput, "requests / s"),
      panel(r, series, W, y0, `${title}p99 latency`, (p) => p.p99Ms, "ms"),
      legend,
    ].join("\n");
  });
  const height = ROWS.length * ROW_H;
  const ceiling = `<text x="${W * 2 - M.right}" y="${height + 16}" text-anchor="end" font-size="11">verify ceiling ${r.verifyCeiling.perSecond}/s on one thread · ${xmlText(r.date)}${r.quick ? " (quick)" : ""}</text>`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W * 2}" height="${height + 24}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...rows,
    ceiling,
    "</svg>",
    "",
  ].join("\n");
}
