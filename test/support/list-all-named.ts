import assert from "node:assert/strict";
import type { ListPosition, NamedTokenSummary } from "../../src/store/list-named-tokens.js";
import { type TokenRecordExtras, tokenRecordExtras } from "../../src/store/token-record.js";
import type { NewToken, TokenStore } from "../../src/store/token-store.js";

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

/**
 * What a listing answers for a token created as `token` and never used: its
 * id, name and expiry, and every other stored field (token-record.ts), at
 * its default where the create left it out.
 */
export function listedAs(
  token: Pick<NewToken, "tokenId" | "expiresAtMs"> & Partial<TokenRecordExtras>,
  name: string,
): NamedTokenSummary {
  const { tokenId, expiresAtMs, ...given } = token;
  const extras = tokenRecordExtras(Buffer.alloc(0));
  for (const field of Object.keys(extras)) {
    const value = Reflect.get(given, field);
    if (value !== undefined) {
      Reflect.set(extras, field, value);
    }
  }
  return { ...extras, id: tokenId, name, expiresAtMs, lastUsedAtMs: undefined };
}
