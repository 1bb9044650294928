import { readFileSync } from "node:fs";

/** A V8 heap snapshot file, as far as a summary needs it. */
interface HeapSnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface HeapSnapshotSummary {
  /** Self size of all nodes, bytes. */
  totalBytes: number;
  /** Self size by node type (code, string, object, array, closure, hidden, native …), largest first. */
  byType: [type: string, bytes: number][];
  /** Self size by constructor or name (objects, code, native), the largest `top`. */
  byName: [name: string, bytes: number][];
}

/** Where a heap snapshot's bytes are: by node type, and the largest names. */
export function summarizeHeapSnapshot(path: string, top = 15): HeapSnapshotSummary {
  const file = JSON.parse(readFileSync(path, "utf8")) as HeapSnapshotFile;
  const fields = file.snapshot.meta.node_fields;
  const types = file.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const byType = new Map<string, number>();
  const byName = new Map<string, number>();
  let totalBytes = 0;
  for (let i = 0; i < file.nodes.length; i += width) {
    const type = types[file.nodes[i + typeAt] ?? 0] ?? "?";
    const size = file.nodes[i + sizeAt] ?? 0;
    totalBytes += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    // Strings and numbers by name would list every value: their type says enough.
    if (type !== "string" && type !== "number" && type !== "concatenated string") {
      const name = `${type}: ${(file.strings[file.nodes[i + nameAt] ?? 0] ?? "").slice(0, 60)}`;
      byName.set(name, (byName.get(name) ?? 0) + size);
    }
  }
  const largest = (map: Map<string, number>, n: number) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  return { totalBytes, byType: largest(byType, 20), byName: largest(byName, top) };
}
