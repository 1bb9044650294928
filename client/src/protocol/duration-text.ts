/**
 * A clock difference of `ms` (either sign; its size is written) as a person
 * reads it: seconds, minutes, hours or days, one decimal below days. The
 * service words its "Signature expired" details with it, the CLI and the
 * console their hints, so that both say the same.
 */
export function durationText(ms: number): string {
  const seconds = Math.abs(ms) / 1000;
  if (seconds < 120) {
    return `${seconds.toFixed(1)} s`;
  }
  if (seconds < 7200) {
    return `${(seconds / 60).toFixed(1)} min`;
  }
  if (seconds < 172_800) {
    return `${(seconds / 3600).toFixed(1)} h`;
  }
  return `${Math.round(seconds / 86_400)} days`;
}
