// The page's table of tokens; only a browser shows it.
// Tested by test/integration/console.test.ts.

import type { TokenSummary } from "@perps/token-client";
import { byId, create } from "./dom.js";

/** A cell with its label, which narrow screens show before the value (console.css). */
function cell(label: string, text: string, className?: string): HTMLTableCellElement {
  const td = create("td", text);
  td.dataset.label = label;
  if (className !== undefined) {
    td.className = className;
  }
  return td;
}

/** `2026-12-03T10:52:00Z` as `2026-12-03 10:52`: the minute it is kept to, in UTC as the header says. */
function minuteText(instant: string): string {
  return `${instant.slice(0, 10)} ${instant.slice(11, 16)}`;
}

/**
 * Shows the user's named tokens in the table "Tokens" (what each may do,
 * from where, and when it was last used), each row with its "Revoke <name>"
 * button, or the empty state when there are none.
 */
export function renderTokens(
  tokens: readonly TokenSummary[],
  onRevoke: (token: TokenSummary) => void,
): void {
  const rows = byId("token-rows", HTMLTableSectionElement);
  const table = byId("tokens", HTMLTableElement);
  const empty = byId("empty", HTMLParagraphElement);
  rows.replaceChildren(
    ...tokens.map((token) => {
      const row = create("tr");
      row.dataset.tokenId = token.id;
      const name = create("td", token.name);
      name.className = "name";
      const id = create("td");
      id.dataset.label = "ID";
      id.append(create("code", token.id));
      const scopes = cell("Scopes", token.scopes.join(", "), "grants");
      const from = cell(
        "Allowed from",
        token.allowedIps.length === 0 ? "any address" : token.allowedIps.join(", "),
        "grants",
      );
      const expires = cell("Expires", token.expiresAt, "when");
      const used = cell(
        "Last used",
        token.lastUsedAt === undefined ? "never" : minuteText(token.lastUsedAt),
        "when",
      );
      const action = create("td");
      const revoke = create("button", "Revoke");
      revoke.type = "button";
      revoke.className = "revoke";
      revoke.setAttribute("aria-label", `Revoke ${token.name}`);
      revoke.addEventListener("click", () => onRevoke(token));
      action.append(revoke);
      row.append(name, id, scopes, from, expires, used, action);
      return row;
    }),
  );
  table.hidden = tokens.length === 0;
  empty.hidden = tokens.length !== 0;
}
