/** Prometheus text → samples, e.g. `name{a="b"}` → value. */
export function samples(text: string): Map<string, number> {
  const map = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) {
      map.set(match[1], Number(match[2]));
    }
  }
  return map;
}
