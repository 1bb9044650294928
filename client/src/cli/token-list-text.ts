import type { TokenSummary } from "../sdk/token-calls.js";

const HEADERS = ["ID", "EXPIRES (UTC)", "NAME"] as const;

/**
 * `list`'s answer for people: a table of id, expiry date and name (last, as
 * the one column of varying width), or "No named tokens." when empty.
 */
export function tokenListText(
  tokens: readonly Pick<TokenSummary, "id" | "expiresAt" | "name">[],
): string {
  if (tokens.length === 0) {
    return "No named tokens.";
  }
  const rows = [[...HEADERS], ...tokens.map((t) => [t.id, t.expiresAt, t.name])];
  const idWidth = Math.max(...rows.map((r) => r[0]?.length ?? 0));
  const dateWidth = Math.max(...rows.map((r) => r[1]?.length ?? 0));
  return rows
    .map(
      ([id = "", date = "", name = ""]) =>
        `${id.padEnd(idWidth)}  ${date.padEnd(dateWidth)}  ${name}`,
    )
    .join("\n");
}
