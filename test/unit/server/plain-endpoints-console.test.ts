import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ConsoleAssetsError, loadConsoleAssets } from "../../../src/server/console-assets.js";
import { CONSOLE_CSP, createConsoleEndpoint } from "../../../src/server/plain-endpoints.js";

const dir = mkdtempSync(join(tmpdir(), "console-assets-"));

describe("console endpoint", () => {
  let server: Server;
  let base = "";

  before(async () => {
    mkdirSync(join(dir, "built"));
    writeFileSync(join(dir, "built/index.html"), "<!doctype html><title>t</title>");
    writeFileSync(join(dir, "built/console.js"), "console.log(1)\n".repeat(50));
    writeFileSync(join(dir, "built/notes.md"), "not served");
    const serve = createConsoleEndpoint(loadConsoleAssets(join(dir, "built")));
    server = createServer((req, res) => {
      if (!serve.answer(req, res)) {
        res.writeHead(404);
        res.end("passed on");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the page at / and the other files under /console/, with the security headers", async () => {
    const page = await fetch(`${base}/?from=somewhere`);
    assert.equal(page.status, 200);
    assert.equal(await page.text(), "<!doctype html><title>t</title>");
    assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(page.headers.get("content-security-policy"), CONSOLE_CSP);
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-/);
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");
    assert.equal(page.headers.get("referrer-policy"), "no-referrer");
    const script = await fetch(`${base}/console/console.js`);
    assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.equal(script.headers.get("content-encoding"), "gzip");
    assert.equal(await script.text(), "console.log(1)\n".repeat(50));
  });

  it("answers 304 to its ETag, sends no body to HEAD, identity to a client without gzip", async () => {
    const first = await fetch(`${base}/console/console.js`);
    await first.arrayBuffer();
    const etag = first.headers.get("etag") ?? "";
    assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
    const again = await fetch(`${base}/console/console.js`, {
      headers: { "if-none-match": `"other", ${etag}` },
    });
    assert.equal(again.status, 304);
    const head = await fetch(`${base}/`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
    const plain = await fetch(`${base}/console/console.js`, {
      headers: { "accept-encoding": "gzip;q=0, identity" },
    });
    assert.equal(plain.headers.get("content-encoding"), null);
    assert.equal(plain.headers.get("content-length"), String(15 * 50));
    await plain.arrayBuffer();
  });

  it("passes on other files, paths and methods", async () => {
    for (const [method, path] of [
      ["GET", "/console/notes.md"],
      ["GET", "/console/index.html"],
      ["GET", "/console/"],
      ["GET", "/index.html"],
      ["POST", "/"],
      ["DELETE", "/console/console.js"],
    ] as const) {
      const res = await fetch(`${base}${path}`, { method });
      assert.equal(await res.text(), "passed on", `${method} ${path}`);
    }
  });

  it("refuses to start without a built console, saying what to do", async () => {
    assert.throws(
      () => loadConsoleAssets(join(dir, "missing")),
      (err) => err instanceof ConsoleAssetsError && /not built: no index\.html/.test(err.message),
    );
    const { readConsole } = await import("../../../src/process/start-files.js");
    // readConsole reads dist/console, which `npm ci` built: it loads.
    assert.ok(readConsole().has("/"));
  });
});
