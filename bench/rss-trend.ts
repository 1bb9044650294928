/** The leak check's reading of RSS samples taken after equal steps of requests. */
export interface RssTrend {
  /** RSS on the least-squares line through the samples, at the first and the last step (MB). */
  readonly firstMb: number;
  readonly lastMb: number;
  /** lastMb ÷ firstMb: above 1 the RSS grows with the requests served. */
  readonly ratio: number;
}

/**
 * Fits a straight line through (requests, RSS) and reads it at both ends. A
 * leak is a trend; RSS also swings by tens of MB between samples as the
 * garbage collector's heap grows and shrinks, and comparing two single
 * samples would read that swing as a leak (or hide one).
 */
export function rssTrend(requests: readonly number[], rssMb: readonly number[]): RssTrend {
  const n = Math.min(requests.length, rssMb.length);
  if (n === 0) {
    return { firstMb: 0, lastMb: 0, ratio: 1 };
  }
  const xs = requests.slice(0, n);
  const ys = rssMb.slice(0, n);
  const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / n;
  const mx = mean(xs);
  const my = mean(ys);
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] ?? mx) - mx;
    sxy += dx * ((ys[i] ?? my) - my);
    sxx += dx * dx;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const at = (x: number) => my + slope * (x - mx);
  const round = (mb: number) => Math.round(mb * 10) / 10;
  const firstMb = at(xs[0] ?? mx);
  const lastMb = at(xs[n - 1] ?? mx);
  return {
    firstMb: round(firstMb),
    lastMb: round(lastMb),
    ratio: firstMb <= 0 ? 1 : Math.round((lastMb / firstMb) * 1000) / 1000,
  };
}
