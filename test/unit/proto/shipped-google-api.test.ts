import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

// proto/google/api/ ships the two files the contract imports, so that a caller
// with protoc alone finds every import under proto/. They are copies of the
// npm package buf builds the rest of google/ from: never edited by hand.
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const SHIPPED = join(ROOT, "proto", "google", "api");
const UPSTREAM = join(ROOT, "node_modules", "google-proto-files", "google", "api");

describe("proto/google/api", () => {
  it("holds annotations.proto and http.proto, as google-proto-files ships them", () => {
    const files = readdirSync(SHIPPED).sort();
    assert.deepEqual(files, ["annotations.proto", "http.proto"]);
    for (const file of files) {
      assert.equal(
        readFileSync(join(SHIPPED, file), "utf8"),
        readFileSync(join(UPSTREAM, file), "utf8"),
        `${file} differs from node_modules/google-proto-files/google/api/${file}`,
      );
    }
  });

  it("is all the google/api the contract imports", () => {
    const imports = new Set<string>();
    for (const dir of ["perps/token/v1", "perps/api/v1"]) {
      for (const file of readdirSync(join(ROOT, "proto", dir))) {
        const text = readFileSync(join(ROOT, "proto", dir, file), "utf8");
        for (const [, path] of text.matchAll(/^import "(google\/api\/[^"]+)";/gm)) {
          imports.add(path ?? "");
        }
      }
    }
    const annotations = readFileSync(join(SHIPPED, "annotations.proto"), "utf8");
    for (const [, path] of annotations.matchAll(/^import "(google\/api\/[^"]+)";/gm)) {
      imports.add(path ?? "");
    }
    assert.deepEqual([...imports].sort(), [
      "google/api/annotations.proto",
      "google/api/http.proto",
    ]);
  });
});
