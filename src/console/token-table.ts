// The page's table of tokens; only a browser shows it.
// Tested by test/integration/console.test.ts.

import type { TokenSummary } from "@perps/token-client";
import { byId, create } from "./dom.js";

/**
 * Shows the user's named tokens in the table "Tokens", each row with its
 * "Revoke <name>" button, or the empty state when there are none.
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
      const expires = create("td", token.expiresAt);
      expires.dataset.label = "Expires";
      const action = create("td");
      const revoke = create("button", "Revoke");
      revoke.type = "button";
      revoke.className = "revoke";
      revoke.setAttribute("aria-label", `Revoke ${token.name}`);
      revoke.addEventListener("click", () => onRevoke(token));
      action.append(revoke);
      row.append(name, id, expires, action);
      return row;
    }),
  );
  table.hidden = tokens.length === 0;
  empty.hidden = tokens.length !== 0;
}
