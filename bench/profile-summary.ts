// `tsx bench/profile-summary.ts <file.cpuprofile> [top]`: where a V8 CPU
// profile's self time went, by function and by package, as markdown.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package, node itself, or our src/. */
function area(url: string): string {
  if (url === "") return "(native / idle / gc)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1] !== undefined) return pkg[1];
  if (url.startsWith("node:")) return "node core";
  const src = /\/(src\/[^/]+)\//.exec(url);
  return src?.[1] ?? url;
}

export function summarizeProfile(path: string, top = 25): string {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = profile.endTime - profile.startTime;
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*\/(node_modules|src)\//, "$1/");
    const key = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const a = area(url);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
  }
  const pct = (us: number) => `${((us / total) * 100).toFixed(1)}%`;
  const rows = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `| ${pct(us)} | \`${k}\` |`);
  return [
    `Profile ${path}: ${(total / 1e6).toFixed(1)} s`,
    "",
    "| Self time | Area |",
    "|---:|---|",
    ...rows(byArea, 15),
    "",
    "| Self time | Function |",
    "|---:|---|",
    ...rows(byFunction, top),
    "",
  ].join("\n");
}

// Only when run itself: bench/profile.ts imports it with flags of its own.
const [file, top] = process.argv.slice(2);
if (
  process.argv[1] !== undefined &&
  resolve(process.argv[1]) === import.meta.filename &&
  file !== undefined
) {
  process.stdout.write(summarizeProfile(file, top === undefined ? 25 : Number(top)));
}
