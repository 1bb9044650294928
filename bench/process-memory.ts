import { readFileSync } from "node:fs";

/** Where a process's resident memory lies (Linux /proc, bytes). */
export interface ProcessMemory {
  pid: number;
  /** VmRSS: every resident page, shared ones included (what `ps` and the bench's RSS show). */
  rss: number;
  /** RssAnon: the process's own memory (V8 heap, malloc, buffers). */
  anon: number;
  /** RssFile: mapped files (node's binary and libraries), shared with every node process. */
  file: number;
  /** Pss: resident memory with each shared page divided among the processes sharing it. */
  pss: number;
}

const kib = (text: string, field: string): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(text);
  return match?.[1] === undefined ? 0 : Number(match[1]) * 1024;
};

/** The memory of one process, from /proc/<pid>/status and smaps_rollup. */
export function processMemory(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  let pss = 0;
  try {
    pss = kib(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"), "Pss");
  } catch {
    // Kernels before 4.14 have no smaps_rollup.
  }
  return {
    pid,
    rss: kib(status, "VmRSS"),
    anon: kib(status, "RssAnon"),
    file: kib(status, "RssFile"),
    pss,
  };
}

/**
 * What a node process says of its own memory (process.memoryUsage() and
 * v8's heap statistics), written by the probe below on SIGWINCH.
 */
export interface NodeMemory {
  memoryUsage: NodeJS.MemoryUsage;
  heap: { heap_size_limit: number; malloced_memory: number; total_heap_size: number };
  heapSpaces: { space_name: string; space_size: number; space_used_size: number }[];
}

/**
 * A node flag that loads a probe into a process (and, through execArgv, into
 * its cluster workers) without touching the service's code: on SIGWINCH
 * (ignored by default, so harmless anywhere) it writes its NodeMemory to
 * `$MEMORY_PROBE_DIR/<pid>.json`. A data: URL, so no loader is needed.
 * While a file `$MEMORY_PROBE_DIR/gc` exists, it first runs a full garbage
 * collection (with `--expose-gc`): what is live, not what is yet to be swept.
 */
export function memoryProbeFlag(): string {
  const code = [
    'import { existsSync, writeFileSync } from "node:fs";',
    'import v8 from "node:v8";',
    'process.on("SIGWINCH", () => {',
    "  const dir = process.env.MEMORY_PROBE_DIR;",
    "  if (!dir) return;",
    '  if (existsSync(dir + "/gc")) globalThis.gc?.();',
    '  writeFileSync(dir + "/" + process.pid + ".json", JSON.stringify({ memoryUsage: process.memoryUsage(), heap: v8.getHeapStatistics(), heapSpaces: v8.getHeapSpaceStatistics() }));',
    "});",
  ].join("\n");
  return `--import=data:text/javascript,${encodeURIComponent(code)}`;
}
