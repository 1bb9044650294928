import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import type { ListPosition, NamedTokenSummary } from "../../src/store/list-named-tokens.js";
import { createTokenStore, type NewToken } from "../../src/store/token-store.js";
import { redisServerSuite } from "../support/redis-server-suite.js";
import { STORE_SETTINGS } from "../support/store-settings.js";
import { storeUser } from "../support/stored-tokens.js";

// ListTokens' pages in the store (issue 34): cut inside Redis, resumed after
// the last (expiry, name) a page scanned, and a list rate of their own.

/** (expiry, name in UTF-8 bytes): the listing's order. */
function compare(a: NamedTokenSummary, b: NamedTokenSummary): number {
  return a.expiresAtMs - b.expiresAtMs || Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
}

describe("token store pages", () => {
  const { redis } = redisServerSuite();

  /** A user whose signing key is registered, and a maker of its named tokens. */
  async function newUser() {
    const token = await storeUser(redis);
    return (name: string, expiresAtMs: number): NewToken => token(name, expiresAtMs);
  }

  it("pages list every token live throughout exactly once, in order, whatever changes between pages", async () => {
    const store = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis },
      rateLimitPerMinute: 1000,
    });
    const token = await newUser();
    const shared = Date.now() + 3_600_000;
    // Ties on expiry, ordered by name bytes: "z" < "ä" (0xC3) < "😀" (0xF0).
    const names = ["a", "b", "z", "ä", "😀", "ab", "b\u0301", "m", "n", "o"];
    const tokens = [
      ...names.map((name) => token(name, shared)),
      ...Array.from({ length: 8 }, (_, i) => token(`e${i}`, shared - 60_000 * (i + 1))),
      ...Array.from({ length: 6 }, (_, i) => token(`f${i}`, shared + 60_000 * (i + 1))),
    ];
    for (const t of tokens) {
      assert.deepEqual(await store.create(t), { kind: "created" });
    }
    const userId = tokens[0]?.userId ?? "";
    // Between pages: delete the token the last page ended on (the cursor's
    // own), delete one not listed yet, create one before and one after.
    const deleted = new Set<string>();
    const created: NewToken[] = [];
    const all: NamedTokenSummary[] = [];
    let after: ListPosition | undefined;
    let round = 0;
    do {
      const page = await store.listNamed(userId, { size: 3, after });
      assert.ok(page.kind === "page");
      assert.ok(page.tokens.length <= 3);
      all.push(...page.tokens);
      after = page.next;
      round++;
      const cursor = tokens.find((t) => t.tokenId === all.at(-1)?.id);
      const ahead = tokens.find(
        (t) => !deleted.has(t.tokenId) && !all.some((l) => l.id === t.tokenId),
      );
      for (const gone of [cursor, ahead]) {
        if (gone !== undefined && !deleted.has(gone.tokenId)) {
          assert.deepEqual(await store.delete({ ...gone, messageDigest: randomBytes(32) }), {
            kind: "deleted",
          });
          deleted.add(gone.tokenId);
        }
      }
      for (const extra of [token(`new-${round}`, shared), token(`a-${round}`, shared - 1)]) {
        assert.deepEqual(await store.create(extra), { kind: "created" });
        created.push(extra);
      }
    } while (after !== undefined);
    const ids = all.map((t) => t.id);
    assert.equal(new Set(ids).size, ids.length, "no token is listed twice");
    const throughout = tokens.filter((t) => !deleted.has(t.tokenId));
    for (const t of throughout) {
      assert.ok(ids.includes(t.tokenId), `${t.name} was live throughout and is listed`);
    }
    for (const id of ids) {
      assert.ok(
        tokens.some((t) => t.tokenId === id) || created.some((t) => t.tokenId === id),
        "only the user's tokens are listed",
      );
    }
    const sorted = [...all].sort(compare);
    assert.deepEqual(all, sorted, "pages come in (expiry, name bytes) order");
    assert.ok(round >= 5, `several pages were read (${round})`);
    assert.ok(deleted.size >= 5, "tokens were deleted between pages");
  });

  it("a page is no larger than asked, and the last page says so", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const token = await newUser();
    const base = Date.now() + 3_600_000;
    const made = ["c", "a", "b"].map((name, i) => token(name, base + i));
    for (const t of made) {
      await store.create(t);
    }
    const userId = made[0]?.userId ?? "";
    const first = await store.listNamed(userId, { size: 2, after: undefined });
    assert.equal(first.kind, "page");
    assert.ok(first.kind === "page");
    assert.deepEqual(
      first.tokens.map((t) => t.name),
      ["c", "a"],
    );
    assert.deepEqual(first.next, { expiresAtMs: base + 1, name: "a" });
    const second = await store.listNamed(userId, { size: 2, after: first.next });
    assert.ok(second.kind === "page");
    assert.deepEqual(
      second.tokens.map((t) => t.name),
      ["b"],
    );
    assert.equal(second.next, undefined);
    // Exactly a page's worth left: no empty page after it.
    const exact = await store.listNamed(userId, { size: 3, after: undefined });
    assert.ok(exact.kind === "page");
    assert.equal(exact.tokens.length, 3);
    assert.equal(exact.next, undefined);
  });

  it("lists have a per-user rate of their own: over it, the wait; other users and creates unaffected", async () => {
    const store = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis },
      listRateLimitPerMinute: 3,
    });
    const token = await newUser();
    const mine = token("mine", Date.now() + 3_600_000);
    await store.create(mine);
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await store.listNamed(mine.userId, { size: 10, after: undefined })).kind,
        "page",
      );
    }
    const refused = await store.listNamed(mine.userId, { size: 10, after: undefined });
    assert.equal(refused.kind, "rate-limited");
    assert.ok(refused.kind === "rate-limited");
    // 3 a minute: a call comes back within 20 s.
    assert.ok(
      refused.retryAfterMs > 0 && refused.retryAfterMs <= 20_000,
      `${refused.retryAfterMs}`,
    );
    const other = await newUser();
    const theirs = other("theirs", Date.now() + 3_600_000);
    await store.create(theirs);
    const page = await store.listNamed(theirs.userId, { size: 10, after: undefined });
    assert.ok(page.kind === "page");
    assert.deepEqual(
      page.tokens.map((t) => t.name),
      ["theirs"],
    );
    // Create and delete keep their own bucket.
    assert.deepEqual(await store.create(token("more", Date.now() + 3_600_000)), {
      kind: "created",
    });
  });
});
