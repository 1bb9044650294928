import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";
import {
  CONSOLE_DIR,
  CONSOLE_PREFIX,
  ConsoleAssetsError,
  loadConsoleAssets,
} from "../../../src/server/console-assets.js";
import { tempDirs } from "../../support/temp-dirs.js";

describe("the console's built files", () => {
  const dirs = tempDirs("console-assets-");
  after(() => dirs.removeAll());

  /** A folder holding these files (paths relative to it). */
  function built(files: Record<string, string>): string {
    const dir = dirs.make();
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(dir, name, ".."), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    return dir;
  }

  it("are read from dist/console, where the build writes them", () => {
    assert.match(CONSOLE_DIR.href, /\/dist\/console\/$/);
    assert.equal(CONSOLE_PREFIX, "/console/");
  });

  it("are served by URL path: the page at /, the others under /console/, subfolders kept", () => {
    const assets = loadConsoleAssets(
      built({
        "index.html": "<!doctype html>",
        "console.js": "run()",
        "console.css": "body{}",
        "icons/key.svg": "<svg/>",
        "console.js.map": "{}",
        "notes.md": "not served",
      }),
    );
    assert.deepEqual([...assets.keys()].sort(), [
      "/",
      "/console/console.css",
      "/console/console.js",
      "/console/icons/key.svg",
    ]);
    assert.equal(assets.get("/")?.contentType, "text/html; charset=utf-8");
    assert.equal(assets.get("/console/console.js")?.contentType, "text/javascript; charset=utf-8");
    assert.equal(assets.get("/console/console.css")?.contentType, "text/css; charset=utf-8");
    assert.equal(assets.get("/console/icons/key.svg")?.contentType, "image/svg+xml");
  });

  it("are held with their gzip and a strong ETag of their bytes", () => {
    const script = "console.log(1)\n".repeat(100);
    const one = loadConsoleAssets(built({ "index.html": "<p>", "console.js": script }));
    const file = one.get("/console/console.js");
    assert.equal(file?.body.toString(), script);
    assert.equal(gunzipSync(file?.gzip ?? Buffer.alloc(0)).toString(), script);
    assert.ok((file?.gzip.length ?? 0) < script.length);
    assert.match(file?.etag ?? "", /^"[A-Za-z0-9_-]{27}"$/);
    const same = loadConsoleAssets(built({ "index.html": "<p>", "console.js": script }));
    assert.equal(same.get("/console/console.js")?.etag, file?.etag);
    const rebuilt = loadConsoleAssets(built({ "index.html": "<p>", "console.js": `${script};` }));
    assert.notEqual(rebuilt.get("/console/console.js")?.etag, file?.etag);
  });

  it("are read from a file URL as from a path", () => {
    const dir = built({ "index.html": "<p>" });
    assert.deepEqual([...loadConsoleAssets(pathToFileURL(`${dir}/`)).keys()], ["/"]);
  });

  it("are refused without a page: the console is not built", () => {
    const dir = built({ "console.js": "run()" });
    assert.throws(
      () => loadConsoleAssets(dir),
      (err) =>
        err instanceof ConsoleAssetsError &&
        err.message === `the token console is not built: no index.html in ${dir}`,
    );
  });
});
