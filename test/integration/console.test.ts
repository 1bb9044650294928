import assert from "node:assert/strict";
import { createPublicKey, randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { SETTING_DEFAULTS } from "../../src/config/config.js";
import { createApp } from "../../src/server/app.js";
import { CONSOLE_CSP } from "../../src/server/plain-endpoints.js";
import {
  activeId,
  alertText,
  createToken,
  dir,
  execFileAsync,
  keyFiles,
  listWith,
  noSideScroll,
  openPage,
  opensslKey,
  privateKeyLeaks,
  ROOT,
  renderedLines,
  requests,
  SIZE_BUDGET_BYTES,
  sessionTokens,
  shot,
  signedIn,
  signIn,
} from "../support/console-page.js";
import { consoleSuite } from "../support/console-suite.js";
import { samples } from "../support/prometheus-samples.js";
import { LISTENER_LIMITS, STORE_SETTINGS } from "../support/store-settings.js";
import { TEST_OPERATOR, testOperatorLookup } from "../support/test-operator.js";

describe("token console", () => {
  const { service, browser, userId, key } = consoleSuite("user.pem");

  it("serves the page, script and style with the security headers, each answer logged and counted", async () => {
    for (const path of ["/", "/console/console.js", "/console/console.css", "/console/icon.svg"]) {
      const res = await fetch(`${service.publicUrl}${path}`);
      assert.equal(res.status, 200, path);
      await res.arrayBuffer();
      const csp = res.headers.get("content-security-policy") ?? "";
      assert.equal(csp, CONSOLE_CSP);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*|https?:/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /default-src 'none'/);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.equal(res.headers.get("referrer-policy"), "no-referrer");
      assert.match(res.headers.get("x-request-id") ?? "", /.+/);
      assert.equal(res.headers.get("cache-control"), "no-cache");
    }
    const page = await fetch(`${service.publicUrl}/`);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    // fetch asks for gzip: the page comes compressed, and revalidates to a 304.
    assert.equal(page.headers.get("content-encoding"), "gzip");
    const html = await page.text();
    assert.match(html, /<script type="module" src="\/console\/console.js">/);
    assert.doesNotMatch(html, /<script>|<style|\sstyle=|\son\w+=/, "nothing inline");
    const etag = page.headers.get("etag") ?? "";
    const again = await fetch(`${service.publicUrl}/`, { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get("content-security-policy"), CONSOLE_CSP);
    const head = await fetch(`${service.publicUrl}/console/console.js`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal((await fetch(`${service.publicUrl}/console/nothing.js`)).status, 404);

    const lines = service.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.method === "console");
    assert.ok(lines.length >= 7, `console answers logged: ${lines.length}`);
    assert.ok(lines.every((line) => typeof line.requestId === "string" && line.code !== undefined));
    const metrics = samples(await (await fetch(`${service.internalUrl}/metrics`)).text());
    const counted = [...metrics].filter(([name]) =>
      name.startsWith('perps_token_requests_total{method="console"'),
    );
    assert.ok(counted.length > 0, "console answers counted in perps_token_requests_total");
  });

  it("is off when the app has no console (CONSOLE=off): GET / is the usual 404", async () => {
    const app = createApp({
      redis: service.redisConnections.main,
      logger: (await import("../../src/log/logger.js")).createLogger({ level: "silent" }),
      host: "127.0.0.1",
      publicPort: 0,
      internalPort: 0,
      tokenMaxLifetimeSeconds: 3600,
      tokenLimits: STORE_SETTINGS,
      durability: { waitTimeoutMs: STORE_SETTINGS.waitTimeoutMs },
      tokenCacheMaxEntries: SETTING_DEFAULTS.tokenCacheMaxEntries,
      lastUseFlushMs: SETTING_DEFAULTS.lastUseFlushMs,
      tokenCacheGraceMs: SETTING_DEFAULTS.tokenCacheGraceMs,
      listenerLimits: LISTENER_LIMITS,
      operatorOf: testOperatorLookup(),
    });
    const { publicPort } = await app.start();
    try {
      for (const path of ["/", "/console/console.js"]) {
        const res = await fetch(`http://127.0.0.1:${publicPort}${path}`);
        assert.equal(res.status, 404);
        assert.equal(res.headers.get("content-type"), "application/json");
        await res.arrayBuffer();
      }
    } finally {
      await app.stop(100);
    }
  });

  it("signs in with an openssl key, creates, lists, revokes with a dialog and signs out", async () => {
    const { context, page } = await openPage(browser, service);
    try {
      await shot(page, "01-sign-in");
      await signIn(page, userId, key.path);
      await signedIn(page);
      await page.getByText("No tokens yet").waitFor();
      assert.equal(await page.getByRole("table", { name: "Tokens" }).isVisible(), false);
      await shot(page, "02-empty");

      await createToken(page, "ci-bot", 30);
      const field = page.getByRole("textbox", { name: "New token: ci-bot" });
      await page.getByRole("row", { name: /ci-bot/ }).waitFor();
      const token = await field.inputValue();
      assert.match(token, /^pt_[A-Za-z0-9_-]{86}$/);
      assert.equal(await field.getAttribute("readonly"), "");
      await page.getByText("it will not be shown again").waitFor();
      await page.getByRole("button", { name: "Copy ci-bot" }).waitFor();
      // The token shown works: it lists, and /auth lets it through as this user.
      const listed = await listWith(service, token);
      assert.equal(listed.status, 200);
      const body = (await listed.json()) as { tokens: { id: string; name: string }[] };
      assert.deepEqual(
        body.tokens.map((t) => t.name),
        ["ci-bot"],
      );
      const auth = await fetch(`${service.internalUrl}/auth`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(auth.status, 200);
      assert.equal(auth.headers.get("x-user-id"), userId);
      await shot(page, "03-created");

      await createToken(page, "deploy", 7);
      const table = page.getByRole("table", { name: "Tokens" });
      await table.getByRole("row", { name: /deploy/ }).waitFor();
      assert.equal(await table.getByRole("row").count(), 3, "a header row and two tokens");
      const rowText = (await table.getByRole("row", { name: /ci-bot/ }).textContent()) ?? "";
      assert.ok(rowText.includes(body.tokens[0]?.id ?? "?"), "the row shows the token's id");
      assert.match(rowText, /\d{4}-\d{2}-\d{2}/);
      await shot(page, "04-list");

      await page.getByRole("button", { name: "Revoke ci-bot" }).click();
      const dialog = page.getByRole("dialog", { name: "Revoke ci-bot?" });
      await dialog.waitFor();
      await shot(page, "05-revoke-dialog");
      await dialog.getByRole("button", { name: "Revoke", exact: true }).click();
      await table.getByRole("row", { name: /ci-bot/ }).waitFor({ state: "detached" });
      assert.equal(await table.getByRole("row").count(), 2);
      const refused = await fetch(`${service.internalUrl}/auth`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(refused.status, 401);

      // Cancel keeps the token.
      await page.getByRole("button", { name: "Revoke deploy" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
      await page.getByRole("dialog").waitFor({ state: "hidden" });
      assert.equal(await table.getByRole("row", { name: /deploy/ }).count(), 1);

      const session = sessionTokens().at(-1) ?? "";
      assert.equal((await listWith(service, session)).status, 200, "the session token lists");
      // The page's own token can only read: least privilege starts with us.
      const introspected = await fetch(
        `${service.internalUrl}/perps.token.v1.TokenIntrospectionService/IntrospectToken`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ token: session }),
        },
      );
      assert.deepEqual(((await introspected.json()) as { scopes?: string[] }).scopes, ["read"]);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByText("Signed out").waitFor();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
      assert.equal(await page.getByRole("textbox", { name: "New token" }).count(), 0);
      await shot(page, "06-signed-out");
      assert.equal((await listWith(service, session)).status, 401, "the session token is refused");
      // Nothing kept in the browser's storage either.
      const stored = await page.evaluate(
        "[localStorage.length, sessionStorage.length, document.cookie]",
      );
      assert.deepEqual(stored, [0, 0, ""]);
      assert.deepEqual((await context.cookies()).length, 0);
    } finally {
      await context.close();
    }
  });

  it("creates and revokes from the keyboard alone", async () => {
    const { context, page } = await openPage(browser, service);
    try {
      await page.keyboard.press("Tab");
      assert.equal(await activeId(page), "user-id");
      await page.keyboard.type(userId);
      await page.keyboard.press("Tab");
      assert.equal(await activeId(page), "key-file");
      // The file itself is handed to the focused input: a keyboard opens the
      // system's file dialog, which a headless browser may or may not report.
      await page.locator(":focus").setInputFiles(key.path);
      await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      await signedIn(page);
      // Signed in, the focus is on Name.
      // A locator, not waitForFunction: its predicate is an eval, which the page's CSP refuses.
      await page.locator("#name:focus").waitFor();
      await page.keyboard.type("kb-bot");
      await page.keyboard.press("Tab");
      await page.keyboard.press("ControlOrMeta+a");
      await page.keyboard.type("3");
      await page.keyboard.press("Enter");
      await page.getByRole("row", { name: /kb-bot/ }).waitFor();
      // The new token has the focus, ready to copy.
      await page.locator("textarea:focus").waitFor();
      assert.match(
        String(await page.evaluate("document.activeElement?.labels?.[0]?.textContent")),
        /^New token: kb-bot$/,
      );
      let reached = false;
      for (let i = 0; i < 20 && !reached; i++) {
        await page.keyboard.press("Tab");
        reached = await page.evaluate(
          'document.activeElement?.getAttribute("aria-label") === "Revoke kb-bot"',
        );
      }
      assert.ok(reached, "Tab reaches the Revoke kb-bot button");
      await page.keyboard.press("Enter");
      await page.getByRole("dialog").waitFor();
      // Escape cancels; the focus starts on Cancel, so Tab then Enter confirms.
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "hidden" });
      await page.keyboard.press("Enter");
      await page.getByRole("dialog").waitFor();
      assert.equal(await activeId(page), "revoke-cancel");
      await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      await page.getByRole("row", { name: /kb-bot/ }).waitFor({ state: "detached" });
      await page.getByText("Revoked kb-bot").waitFor();
      await shot(page, "07-keyboard-revoked");
    } finally {
      await context.close();
    }
  });

  it("shows each refusal's own message in the alert", async () => {
    const rsa = opensslKey("rsa.pem", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024");
    const notPem = join(dir, "notes.txt");
    writeFileSync(notPem, "my key is somewhere else\n");
    const { context, page } = await openPage(browser, service);
    try {
      await signIn(page, userId, rsa.path);
      assert.match(
        await alertText(page, /RSA/),
        /^Sign in failed: Private key: not an Ed25519 key \(RSA\)$/,
      );
      await shot(page, "08-error-bad-key");
      await signIn(page, userId, notPem);
      assert.match(await alertText(page, /PEM/), /Private key: not a PEM file/);
      // An unknown user and a key not registered get the one answer the service gives both.
      await signIn(page, randomUUID(), key.path);
      assert.match(
        await alertText(page, /Invalid signature/),
        /^Sign in failed: Invalid signature \(/,
      );
      await signIn(page, userId, opensslKey("other.pem").path);
      await alertText(page, /Invalid signature/);
      await page.getByRole("textbox", { name: "User ID" }).fill("");
      await page.getByRole("button", { name: "Sign in" }).click();
      await alertText(page, /User ID: enter your user id/);
      // Not empty but not a user id: said as such, in the form's words.
      await page.getByRole("textbox", { name: "User ID" }).fill("bob");
      await page.getByRole("button", { name: "Sign in" }).click();
      assert.match(
        await alertText(page, /not a user id/),
        /^Sign in failed: User ID: "bob" is not a user id: it is a UUID such as /,
      );

      await signIn(page, userId, key.path);
      await signedIn(page);
      assert.equal(await page.getByRole("alert").textContent(), "", "a success clears the alert");
      await createToken(page, "twice");
      await page.getByRole("row", { name: /twice/ }).waitFor();
      const first = page.getByRole("textbox", { name: "New token: twice" });
      const token = await first.inputValue();
      assert.match(token, /^pt_/);
      await createToken(page, "twice");
      assert.match(
        await alertText(page, /already has this name/),
        /^Create failed: Name: one of your live tokens already has this name$/,
      );
      // The failed create leaves the earlier token on show: it may not be copied yet.
      assert.equal(await first.inputValue(), token);
      assert.ok(await first.isVisible());
      await shot(page, "09-error-name-taken");
      await page.getByRole("textbox", { name: "Name" }).fill("");
      await page.getByRole("button", { name: "Create token" }).click();
      await alertText(page, /Name: give the token a name/);
      // The service's own limits apply: a lifetime above its maximum.
      await createToken(page, "forever", 1000);
      assert.match(
        await alertText(page, /Lifetime: at most/),
        /^Create failed: Lifetime: at most 365 days$/,
      );
    } finally {
      await context.close();
    }

    const skewed = await openPage(browser, service, { clockSkewMs: 10 * 60_000 });
    try {
      await signIn(skewed.page, userId, key.path);
      assert.match(
        await alertText(skewed.page, /Signature expired/),
        /^Sign in failed: Signature expired \(this device's clock/,
      );
      await shot(skewed.page, "10-error-signature-expired");
    } finally {
      await skewed.context.close();
    }
  });

  it("keeps each new token on show until it is dismissed, whatever create comes after", async () => {
    const { context, page } = await openPage(browser, service);
    try {
      await signIn(page, userId, key.path);
      await signedIn(page);
      await createToken(page, "kept");
      await page.getByRole("row", { name: /kept/ }).waitFor();
      const kept = page.getByRole("textbox", { name: "New token: kept" });
      const keptToken = await kept.inputValue();
      assert.match(keptToken, /^pt_/);
      // A create that fails (the name is taken) hides nothing.
      await createToken(page, "kept");
      await alertText(page, /already has this name/);
      assert.ok(await kept.isVisible());
      assert.equal(await kept.inputValue(), keptToken);
      // One that works shows its token first, above the one not dismissed yet.
      await createToken(page, "later");
      await page.getByRole("row", { name: /later/ }).waitFor();
      const later = page.getByRole("textbox", { name: "New token: later" });
      assert.match(await later.inputValue(), /^pt_/);
      assert.notEqual(await later.inputValue(), keptToken);
      assert.ok(await kept.isVisible());
      assert.equal(await kept.inputValue(), keptToken);
      const [laterBox, keptBox] = await Promise.all([later.boundingBox(), kept.boundingBox()]);
      assert.ok(laterBox !== null && keptBox !== null && laterBox.y < keptBox.y, "newest first");
      await shot(page, "18-two-new-tokens");

      // Dismiss takes away that token only, and the focus goes back to Name.
      await page.getByRole("button", { name: "Dismiss kept" }).click();
      await kept.waitFor({ state: "detached" });
      assert.ok(await later.isVisible());
      assert.equal(await activeId(page), "name");
      await page.getByRole("button", { name: "Dismiss later" }).click();
      assert.equal(await page.getByRole("textbox", { name: /^New token/ }).count(), 0);
    } finally {
      await context.close();
    }
  });

  it("shows a User ID placeholder that cannot pass for a user id", async () => {
    const { context, page } = await openPage(browser, service);
    try {
      const field = page.getByRole("textbox", { name: "User ID" });
      const placeholder = (await field.getAttribute("placeholder")) ?? "";
      assert.match(placeholder, /user id/i, "it says what goes there");
      // No digits, nothing UUID-shaped: grey text that reads as a filled-in value misleads.
      assert.doesNotMatch(placeholder, /\d|[0-9a-f]{4,}-/i);
      assert.equal(await field.inputValue(), "");
    } finally {
      await context.close();
    }
  });

  it("lays the registration command out with no lone backslash on a line, at any width", async () => {
    const { context, page } = await openPage(browser, service, { width: 320 });
    try {
      await page.getByText("No key yet?").click();
      await page.getByRole("textbox", { name: "User ID" }).fill(randomUUID());
      await page.getByRole("button", { name: "Generate key" }).click();
      await page.getByRole("textbox", { name: "Public key" }).waitFor();
      const command = (await page.locator("#register-command").textContent()) ?? "";
      assert.match(command, / \\\n/, "a command with line continuations");
      for (let width = 320; width <= 1280; width += 8) {
        await page.setViewportSize({ width, height: 760 });
        const lines = await renderedLines(page, "#register-command");
        assert.equal(
          lines.join("").replace(/\s/g, ""),
          command.replace(/\s/g, ""),
          `${width}px: every character is drawn`,
        );
        for (const line of lines) {
          assert.notEqual(
            line.trim(),
            "\\",
            `${width}px: a lone backslash in ${JSON.stringify(lines)}`,
          );
        }
        assert.ok(await noSideScroll(page), `${width}px: the page does not scroll sideways`);
      }
      await page.setViewportSize({ width: 375, height: 760 });
      await shot(page, "19-phone-command");
    } finally {
      await context.close();
    }
  });

  it("generates a key in the browser whose registration command works as shown", async () => {
    const newUserId = randomUUID();
    const { context, page } = await openPage(browser, service);
    try {
      await page.getByText("No key yet?").click();
      await page.getByRole("textbox", { name: "User ID" }).fill(newUserId);
      await page.getByRole("button", { name: "Generate key" }).click();
      const publicKey = page.getByRole("textbox", { name: "Public key" });
      await publicKey.waitFor();
      const hex = await publicKey.inputValue();
      assert.match(hex, /^[0-9a-f]{64}$/);
      const command = (await page.locator("#register-command").textContent()) ?? "";
      assert.match(
        command,
        /^buf curl --http2-prior-knowledge --protocol grpc \\\n {2}-H "authorization: Bearer \$\{OPERATOR_SECRET:-\$\(cat \.data\/redis\/operator-secret\)\}" \\\n {2}-d '\{"userId":"/,
      );
      assert.ok(command.includes(newUserId) && command.includes(hex));
      const downloading = page.waitForEvent("download");
      await page.getByRole("button", { name: "Download private key" }).click();
      const download = await downloading;
      const pemPath = join(dir, "downloaded.pem");
      await download.saveAs(pemPath);
      keyFiles.push(pemPath);
      const downloaded = download.suggestedFilename();
      assert.match(downloaded, /^perps-key-[0-9a-f]{8}\.pem$/);
      // Then the page points to where that file goes: Private key, highlighted and saying so.
      assert.match(
        (await page.getByRole("status").textContent()) ?? "",
        new RegExp(`${downloaded}.*Private key`),
      );
      const pointer = page.getByText(`Choose ${downloaded} here`);
      assert.ok(await pointer.isVisible());
      const keyFileRing = "getComputedStyle(document.getElementById('key-file')).boxShadow";
      assert.notEqual(await activeId(page), "key-file");
      assert.notEqual(await page.evaluate(keyFileRing), "none", "Private key is highlighted");
      // The file is what openssl writes, and its public key is the one shown.
      const jwk = createPublicKey(readFileSync(pemPath, "utf8")).export({ format: "jwk" });
      assert.equal(Buffer.from(jwk.x ?? "", "base64url").toString("hex"), hex);
      await shot(page, "11-generated-key");

      // The operator runs the command exactly as shown.
      // Not execFileSync: the service runs in this process and must answer meanwhile.
      await execFileAsync("bash", ["-c", command], {
        env: {
          ...process.env,
          INTERNAL: service.internalUrl,
          OPERATOR_SECRET: TEST_OPERATOR.secret,
          PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH ?? ""}`,
        },
      });
      // A button takes the user there, and opens the file dialog of Private key.
      const choosing = page.waitForEvent("filechooser");
      await page.getByRole("button", { name: "Choose the downloaded file" }).click();
      await (await choosing).setFiles(pemPath);
      assert.equal(await activeId(page), "key-file");
      await pointer.waitFor({ state: "hidden" });
      assert.equal(await page.evaluate(keyFileRing), "none", "chosen, no longer highlighted");
      // The User ID is still the one the key was made for.
      await page.getByRole("button", { name: "Sign in" }).click();
      await signedIn(page);
      await page.getByText("No tokens yet").waitFor();
    } finally {
      await context.close();
    }
  });

  it("is readable at phone width: no horizontal scroll, the new token whole", async () => {
    const { context, page } = await openPage(browser, service, { width: 375, clipboard: true });
    try {
      assert.ok(await noSideScroll(page), "sign-in form");
      await shot(page, "12-phone-sign-in");
      await signIn(page, userId, key.path);
      await signedIn(page);
      await createToken(page, "a-rather-long-token-name-for-the-nightly-reconciliation-job", 90);
      await page.getByRole("row", { name: /nightly/ }).waitFor();
      assert.ok(await noSideScroll(page), "list and new token");
      // All of the token is in sight: its field scrolls neither sideways nor down, and fits the screen.
      const token = await page.getByRole("textbox", { name: /^New token/ }).inputValue();
      assert.match(token, /^pt_[A-Za-z0-9_-]{86}$/);
      const shown = await page.evaluate(`(() => {
        const field = document.querySelector('[id^="new-token"]');
        const box = field.getBoundingClientRect();
        return {
          scrolledOut: field.scrollWidth > field.clientWidth || field.scrollHeight > field.clientHeight,
          onScreen: box.left >= 0 && box.right <= window.innerWidth,
        };
      })()`);
      assert.deepEqual(shown, { scrolledOut: false, onScreen: true });
      // Copy puts it on the clipboard, whole.
      const copy = page.getByRole("button", { name: /^Copy/ });
      const copyBox = await copy.boundingBox();
      assert.ok(copyBox !== null && copyBox.x + copyBox.width <= 375, "Copy is on screen");
      await copy.click();
      await page.getByText("Token copied").waitFor();
      assert.equal(await page.evaluate("navigator.clipboard.readText()"), token);
      await shot(page, "13-phone-list");
      await page.getByRole("button", { name: /^Revoke a-rather/ }).click();
      await page.getByRole("dialog").waitFor();
      assert.ok(await noSideScroll(page), "dialog");
      await shot(page, "14-phone-dialog");
    } finally {
      await context.close();
    }
  });

  it("loads nothing from other origins, and its own script and style stay under 50 KB gzipped", () => {
    const pageRequests = requests.filter((r) => !r.url.startsWith("blob:"));
    assert.ok(pageRequests.length > 20);
    for (const r of pageRequests) {
      assert.ok(r.url.startsWith(`${service.publicUrl}/`), `request to another origin: ${r.url}`);
    }
    const assets = new Set(
      pageRequests
        .filter((r) => ["script", "stylesheet"].includes(r.resourceType))
        .map((r) => r.url),
    );
    assert.deepEqual([...assets].map((url) => new URL(url).pathname).sort(), [
      "/console/console.css",
      "/console/console.js",
    ]);
    let gzipped = 0;
    for (const path of ["console/console.js", "console/console.css"]) {
      gzipped += gzipSync(readFileSync(join(ROOT, "dist", path))).byteLength;
    }
    assert.ok(gzipped < SIZE_BUDGET_BYTES, `script and style: ${gzipped} bytes gzipped`);
  });

  it("no request ever carries a private key", () => {
    assert.ok(keyFiles.length >= 4);
    assert.ok(requests.length > 20);
    assert.deepEqual(privateKeyLeaks(), []);
  });
});
