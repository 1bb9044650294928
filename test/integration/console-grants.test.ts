import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Page } from "playwright-core";
import {
  activeId,
  alertText,
  createToken,
  noSideScroll,
  openPage,
  privateKeyLeaks,
  requests,
  shot,
  signedIn,
  signIn,
} from "../support/console-page.js";
import { consoleSuite } from "../support/console-suite.js";
import type { TestService } from "../support/test-service.js";

/** What IntrospectToken says of `token` seen from `clientIp` (Connect JSON on the internal listener). */
async function introspect(
  service: TestService,
  token: string,
  clientIp?: string,
): Promise<{ active?: boolean; scopes?: string[] }> {
  const res = await fetch(
    `${service.internalUrl}/perps.token.v1.TokenIntrospectionService/IntrospectToken`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, ...(clientIp === undefined ? {} : { clientIp }) }),
    },
  );
  assert.equal(res.status, 200);
  return (await res.json()) as { active?: boolean; scopes?: string[] };
}

/** The Scopes checkboxes as the page shows them: checked, and enabled. */
async function scopeBoxes(page: Page): Promise<Record<string, [boolean, boolean]>> {
  const boxes: Record<string, [boolean, boolean]> = {};
  for (const scope of ["read", "trade", "transfer", "withdraw"]) {
    const box = page.getByRole("checkbox", { name: new RegExp(`^${scope}\\b`) });
    boxes[scope] = [await box.isChecked(), await box.isEnabled()];
  }
  return boxes;
}

/** The create requests' bodies the page sent, in order. */
function createBodies(): Record<string, unknown>[] {
  return requests
    .filter((r) => r.method === "POST" && r.url.endsWith("/user/tokens"))
    .map((r) => JSON.parse(r.body) as Record<string, unknown>);
}

/** A row's cells by their label (the labels narrow screens show). */
async function rowCells(page: Page, name: string): Promise<Record<string, string>> {
  const row = page.getByRole("table", { name: "Tokens" }).getByRole("row", { name });
  const cells: Record<string, string> = {};
  for (const cell of await row.locator("td[data-label]").all()) {
    cells[(await cell.getAttribute("data-label")) ?? "?"] = (await cell.textContent()) ?? "";
  }
  return cells;
}

/** How many lines each of a row's cells, by label, takes on screen. */
async function lineCounts(page: Page, name: string, labels: string[]): Promise<unknown> {
  return page.evaluate(`(() => {
    const row = [...document.querySelectorAll("#token-rows tr")].find((r) =>
      r.querySelector("td.name")?.textContent === ${JSON.stringify(name)});
    return ${JSON.stringify(labels)}.map((label) => {
      const range = document.createRange();
      range.selectNodeContents(row.querySelector(\`td[data-label="\${label}"]\`));
      return new Set([...range.getClientRects()].map((box) => Math.round(box.top))).size;
    });
  })()`);
}

const AS_OPENED = {
  read: [true, true],
  trade: [true, true],
  transfer: [false, true],
  withdraw: [false, false],
};

describe("token console: scopes, allowed addresses and last use", () => {
  const { service, browser, userId, key } = consoleSuite("grants.pem", { lastUseFlushMs: 200 });

  it("offers withdraw only with an address, and makes the token as ticked and typed", async () => {
    const { context, page } = await openPage(browser, service);
    try {
      await signIn(page, userId, key.path);
      await signedIn(page);
      assert.deepEqual(await scopeBoxes(page), AS_OPENED, "read and trade, withdraw greyed");
      const withdraw = page.getByRole("checkbox", { name: /^withdraw/ });
      assert.match(
        (await page.locator("#withdraw-hint").textContent()) ?? "",
        /withdraw needs allowed addresses/,
      );
      assert.equal(await withdraw.getAttribute("aria-describedby"), "withdraw-hint");
      const addresses = page.getByRole("textbox", { name: /^Allowed addresses/ });
      await addresses.fill("203.0.113.7, 2001:db8::/32");
      assert.ok(await withdraw.isEnabled(), "an address offers withdraw");
      await withdraw.check();
      await addresses.fill("");
      assert.deepEqual(
        [await withdraw.isChecked(), await withdraw.isEnabled()],
        [false, false],
        "no address: withdraw unticked and greyed again",
      );
      await addresses.fill("203.0.113.7, 2001:db8::/32");
      await withdraw.check();
      await page.getByRole("checkbox", { name: /^trade/ }).uncheck();
      await shot(page, "20-grants-form");
      await createToken(page, "payouts", 7);
      const bound = page.getByRole("textbox", { name: "New token: payouts" });
      await page.getByRole("row", { name: /payouts/ }).waitFor();
      const token = await bound.inputValue();
      assert.deepEqual(createBodies().at(-1)?.scopes, ["read", "withdraw"]);
      assert.deepEqual(createBodies().at(-1)?.allowedIps, ["203.0.113.7", "2001:db8::/32"]);
      // The token is what the form said, checked where the platform checks it.
      const inside = await introspect(service, token, "2001:db8:1::5");
      assert.equal(inside.active, true);
      assert.deepEqual(inside.scopes, ["read", "withdraw"]);
      assert.notEqual((await introspect(service, token, "198.51.100.1")).active, true);
      assert.notEqual((await introspect(service, token)).active, true, "no address: closed");
      const cells = await rowCells(page, "payouts");
      assert.deepEqual(
        [cells.Scopes, cells["Allowed from"], cells["Last used"]],
        ["read, withdraw", "203.0.113.7, 2001:db8::/32", "never"],
      );
      // The next token starts from the defaults: nothing inherited by accident.
      assert.deepEqual(await scopeBoxes(page), AS_OPENED);
      assert.equal(await addresses.inputValue(), "");

      // Left as it opens, the form sends the seed's request: no scopes, no addresses.
      await createToken(page, "bot", 7);
      await page.getByRole("row", { name: /bot/ }).waitFor();
      const plain = createBodies().at(-1) ?? {};
      assert.deepEqual(Object.keys(plain).sort(), [
        "expiresIn",
        "name",
        "signature",
        "timestamp",
        "userId",
      ]);
      const botCells = await rowCells(page, "bot");
      assert.equal(botCells.Scopes, "read, trade");
      assert.equal(botCells["Allowed from"], "any address");
      assert.equal(botCells["Last used"], "never");
      const botToken = await page.getByRole("textbox", { name: "New token: bot" }).inputValue();
      await shot(page, "21-grants-list");

      // A use shows in the list, to the minute, in UTC.
      const usedAt = new Date();
      const auth = await fetch(`${service.internalUrl}/auth`, {
        headers: { authorization: `Bearer ${botToken}` },
      });
      assert.equal(auth.status, 200);
      assert.equal(auth.headers.get("x-token-scopes"), "read,trade");
      let lastUsed = "never";
      for (let i = 0; i < 50 && lastUsed === "never"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        // A create refreshes the list, as any change does.
        await createToken(page, `refresh-${i}`, 1);
        await page.getByRole("row", { name: `refresh-${i}` }).waitFor();
        lastUsed = (await rowCells(page, "bot"))["Last used"] ?? "never";
      }
      const minute = usedAt.toISOString().slice(0, 16).replace("T", " ");
      const next = new Date(usedAt.getTime() + 60_000).toISOString().slice(0, 16).replace("T", " ");
      assert.ok([minute, next].includes(lastUsed), `last used ${lastUsed}, used at ${minute}`);
      // An active IntrospectToken is a use too; a token nothing used stays "never".
      assert.match(
        (await rowCells(page, "payouts"))["Last used"] ?? "",
        /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/,
      );
      assert.equal((await rowCells(page, "refresh-0"))["Last used"], "never");
      // Seven columns at desktop width: each date stays on one line.
      assert.deepEqual(await lineCounts(page, "bot", ["Expires", "Last used"]), [1, 1]);
    } finally {
      await context.close();
    }
  });

  it("names a bad address or no scope in the form's words, on that field", async () => {
    const { context, page } = await openPage(browser, service);
    try {
      await signIn(page, userId, key.path);
      await signedIn(page);
      const before = createBodies().length;
      const addresses = page.getByRole("textbox", { name: /^Allowed addresses/ });
      await addresses.fill("203.0.113.7 10.0.0.1/8");
      await createToken(page, "typo");
      assert.match(
        await alertText(page, /Allowed addresses/),
        /^Create failed: Allowed addresses: "10\.0\.0\.1\/8" is not an IPv4 or IPv6 address or a CIDR prefix with its host bits zero/,
      );
      assert.equal(await activeId(page), "allowed-ips");
      await addresses.fill("");
      await page.getByRole("checkbox", { name: /^read/ }).uncheck();
      await page.getByRole("checkbox", { name: /^trade/ }).uncheck();
      await createToken(page, "nothing");
      assert.match(await alertText(page, /Scopes/), /^Create failed: Scopes: choose at least one$/);
      assert.equal(await page.evaluate("document.activeElement?.value"), "read");
      assert.equal(createBodies().length, before, "nothing was signed or sent");
      await shot(page, "22-grants-error");
    } finally {
      await context.close();
    }
  });

  it("ticks scopes from the keyboard, and stays one column wide at phone width", async () => {
    const { context, page } = await openPage(browser, service, { width: 375 });
    try {
      await signIn(page, userId, key.path);
      await signedIn(page);
      await page.locator("#name:focus").waitFor();
      await page.keyboard.type("kb-transfer");
      await page.keyboard.press("Tab");
      await page.keyboard.press("Tab");
      assert.equal(await page.evaluate("document.activeElement?.value"), "read");
      await page.keyboard.press("Tab");
      await page.keyboard.press("Tab");
      assert.equal(await page.evaluate("document.activeElement?.value"), "transfer");
      await page.keyboard.press("Space");
      // withdraw is greyed, so Tab passes it by to the addresses.
      await page.keyboard.press("Tab");
      assert.equal(await activeId(page), "allowed-ips");
      await page.keyboard.type("198.51.100.0/24");
      await page.keyboard.press("Enter");
      await page.getByRole("row", { name: /kb-transfer/ }).waitFor();
      assert.deepEqual(createBodies().at(-1)?.scopes, ["read", "trade", "transfer"]);
      assert.deepEqual(createBodies().at(-1)?.allowedIps, ["198.51.100.0/24"]);
      const cells = await rowCells(page, "kb-transfer");
      assert.equal(cells.Scopes, "read, trade, transfer");
      assert.equal(cells["Allowed from"], "198.51.100.0/24");
      assert.ok(await noSideScroll(page), "form and list");
      // Each line of the card is labelled, and the whole card is on screen.
      const labelled = await page.evaluate(`(() => {
        const row = [...document.querySelectorAll("#token-rows tr")].find((r) =>
          r.textContent.includes("kb-transfer"));
        return [...row.querySelectorAll("td[data-label]")].map((td) => {
          const box = td.getBoundingClientRect();
          return getComputedStyle(td, "::before").content.replace(/"/g, "") + "|" +
            (box.left >= 0 && box.right <= window.innerWidth);
        });
      })()`);
      assert.deepEqual(labelled, [
        "ID: |true",
        "Scopes: |true",
        "Allowed from: |true",
        "Expires: |true",
        "Last used: |true",
      ]);
      await shot(page, "23-grants-phone");
      assert.deepEqual(privateKeyLeaks(), []);
    } finally {
      await context.close();
    }
  });
});
