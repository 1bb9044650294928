import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type RecordedRequest, recordRequests } from "./test-browser.js";
import { operatorHeaders } from "./test-operator.js";
import type { TestService } from "./test-service.js";

export { signedIn, signIn } from "./console-sign-in.js";

// The token console as a user drives it in a browser (console*.test.ts).

export const execFileAsync = promisify(execFile);
export const ROOT = resolve(import.meta.dirname, "../..");
/** Screenshots of each state, kept out of git (.gitignore) and looked at by whoever changes the page. */
export const SHOTS = join(ROOT, "test-output/console");
/** The budget of the page's own script and style, gzipped together. */
export const SIZE_BUDGET_BYTES = 50 * 1024;

export const dir = mkdtempSync(join(tmpdir(), "console-test-"));
/** Every request any page of this file made: none may carry a private key. */
export const requests: RecordedRequest[] = [];
/** Every private key file the pages were given or made. */
export const keyFiles: string[] = [];

export interface KeyFile {
  path: string;
  publicKeyHex: string;
}

/** An Ed25519 key file as the README makes it: `openssl genpkey -algorithm ed25519`. */
export function opensslKey(name: string, ...args: string[]): KeyFile {
  const path = join(dir, name);
  execFileSync(
    "openssl",
    ["genpkey", ...(args.length > 0 ? args : ["-algorithm", "ed25519"]), "-out", path],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  keyFiles.push(path);
  const pem = readFileSync(path, "utf8");
  const jwk = args.length > 0 ? {} : createPublicKey(pem).export({ format: "jwk" });
  return { path, publicKeyHex: Buffer.from(jwk.x ?? "", "base64url").toString("hex") };
}

/** Registers a public key as an operator does: PutUserKey on the internal listener (Connect JSON). */
export async function putUserKey(
  service: TestService,
  userId: string,
  publicKey: string,
): Promise<void> {
  const res = await fetch(`${service.internalUrl}/perps.token.v1.UserKeyService/PutUserKey`, {
    method: "POST",
    headers: { "content-type": "application/json", ...operatorHeaders() },
    body: JSON.stringify({ userId, publicKey }),
  });
  assert.equal(res.status, 200, await res.text());
}

/** The whole page, or what the screen shows when a modal dialog covers it. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const modal = await page.getByRole("dialog").isVisible();
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: !modal });
}

export async function openPage(
  browser: Browser,
  service: TestService,
  opts: { width?: number; clockSkewMs?: number; clipboard?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1000, height: 760 },
    acceptDownloads: true,
    // The page's Copy buttons write to it, and the test reads back what they wrote.
    permissions: opts.clipboard === true ? ["clipboard-read", "clipboard-write"] : [],
  });
  if (opts.clockSkewMs !== undefined) {
    // This page's clock only: what a computer whose time is off signs with.
    await context.addInitScript(`{
      const realNow = Date.now;
      Date.now = () => realNow() + ${opts.clockSkewMs};
    }`);
  }
  const page = await context.newPage();
  recordRequests(page, requests);
  await page.goto(`${service.publicUrl}/`);
  return { context, page };
}

/** The id of the focused element (evaluated in the page: this file has no DOM types). */
export async function activeId(page: Page): Promise<unknown> {
  return page.evaluate("document.activeElement?.id");
}

/**
 * The text of `selector`'s element as the screen shows it: one string per
 * rendered line (characters grouped by where they are drawn), in order.
 * Evaluated in the page, where the layout is.
 */
export async function renderedLines(page: Page, selector: string): Promise<string[]> {
  const lines = await page.evaluate(`(() => {
    const element = document.querySelector(${JSON.stringify(selector)});
    const byTop = new Map();
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = [...range.getClientRects()].find((rect) => rect.width > 0);
        if (box !== undefined) {
          const top = Math.round(box.top);
          byTop.set(top, (byTop.get(top) ?? "") + node.data[i]);
        }
      }
    }
    return [...byTop].sort((a, b) => a[0] - b[0]).map((entry) => entry[1]);
  })()`);
  assert.ok(Array.isArray(lines) && lines.every((line) => typeof line === "string"));
  return lines;
}

/** Whether the page is no wider than the window (no sideways scroll). */
export async function noSideScroll(page: Page): Promise<boolean> {
  return (
    (await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")) === true
  );
}

export async function createToken(page: Page, name: string, days = 30): Promise<void> {
  await page.getByRole("textbox", { name: "Name" }).fill(name);
  await page.getByRole("spinbutton", { name: "Lifetime (days)" }).fill(String(days));
  await page.getByRole("button", { name: "Create token" }).click();
}

export async function alertText(page: Page, pattern: RegExp): Promise<string> {
  const alert = page.getByRole("alert");
  await alert.filter({ hasText: pattern }).waitFor({ timeout: 10_000 });
  return (await alert.textContent()) ?? "";
}

/** The session token the page listed with (its Authorization header): only the test can see it. */
export function sessionTokens(): string[] {
  return requests
    .filter((r) => r.method === "GET" && r.url.endsWith("/user/tokens"))
    .map((r) => (r.headers.authorization ?? "").replace(/^Bearer /, ""));
}

export async function listWith(service: TestService, token: string): Promise<Response> {
  return fetch(`${service.publicUrl}/user/tokens`, {
    headers: { authorization: `Bearer ${token}` },
  });
}

/**
 * The requests (method and URL) that carry any form of a private key of
 * `keyFiles`: its PEM, a base64 line of it, its raw bytes in hex or base64.
 */
export function privateKeyLeaks(): string[] {
  const secrets: string[] = [];
  for (const path of keyFiles) {
    const pem = readFileSync(path, "utf8");
    secrets.push(pem.replace(/-----[^-]+-----/g, "").replace(/\s/g, ""));
    for (const line of pem.split("\n").filter((l) => l.length >= 40 && !l.startsWith("-"))) {
      secrets.push(line);
    }
    const d = createPrivateKey(pem).export({ format: "jwk" }).d;
    if (d !== undefined) {
      const raw = Buffer.from(d, "base64url");
      secrets.push(
        raw.toString("hex"),
        raw.toString("base64"),
        d,
        raw.toString("hex").toUpperCase(),
      );
    }
  }
  return requests
    .filter((r) => {
      const everything = [r.url, JSON.stringify(r.headers), r.body].join("\n");
      return secrets.some((secret) => everything.includes(secret));
    })
    .map((r) => `${r.method} ${r.url}`);
}
