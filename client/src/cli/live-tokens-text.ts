/** A count of revoked tokens for people: "1 live token", "2 live tokens". */
export function liveTokensText(count: number): string {
  return `${count} live token${count === 1 ? "" : "s"}`;
}
