import assert from "node:assert/strict";
import type { ListPosition, NamedTokenSummary, TokenStore } from "../../src/store/token-store.js";

/**
 * Every page of a user's listing straight from the store, `size` a page;
 * `between` runs before each page after the first (to change the tokens
 * between pages). Asserts that no page is refused.
 */
export async function listAll(
  store: TokenStore,
  userId: string,
  size = 100,
  between: () => Promise<void> = async () => {},
): Promise<NamedTokenSummary[]> {
  const tokens: NamedTokenSummary[] = [];
  let after: ListPosition | undefined;
  do {
    if (after !== undefined) {
      await between();
    }
    const outcome = await store.listNamed(userId, { size, after });
    if (outcome.kind !== "page") {
      assert.fail(`page refused: ${outcome.kind}`);
    }
    assert.ok(outcome.tokens.length <= size, "no page is larger than asked");
    tokens.push(...outcome.tokens);
    after = outcome.next;
  } while (after !== undefined);
  return tokens;
}
