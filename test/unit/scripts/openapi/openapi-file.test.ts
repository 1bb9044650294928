import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { readBufImage } from "../../../../scripts/openapi/buf-image.js";
import {
  generateOpenApiFiles,
  OPENAPI_FILE_NAMES,
  staleOpenApiFiles,
} from "../../../../scripts/openapi/openapi-file.js";
import { commentsFromRegistry } from "../../../../scripts/openapi/proto-comments.js";
import { createTokenApiOpenApiDocument } from "../../../../scripts/openapi/token-api-document.js";
import { LIMIT_LOCATIONS_FILE, OPENAPI_FILE } from "../../../../src/openapi/openapi-endpoint.js";

// `npm run openapi` and `npm run check:openapi` (scripts/openapi.ts) are this module.
describe("the generated OpenAPI files", () => {
  const files = generateOpenApiFiles();

  it("are openapi.json and openapi-limits.json at the repository root", () => {
    assert.deepEqual(OPENAPI_FILE_NAMES, ["openapi.json", "openapi-limits.json"]);
    assert.deepEqual(
      files.map((f) => f.file.href),
      [OPENAPI_FILE.href, LIMIT_LOCATIONS_FILE.href],
    );
  });

  it("hold the document with the protos' comments, and where its limits are", () => {
    const [document, limits] = files.map((f) => JSON.parse(f.text));
    const comments = commentsFromRegistry(readBufImage());
    assert.deepEqual(
      document,
      JSON.parse(JSON.stringify(createTokenApiOpenApiDocument({ comments }))),
    );
    assert.match(limits.$comment, /^Written by `npm run openapi`/);
    assert.ok(limits.locations.length > 0);
  });

  it("are formatted as biome formats JSON: two-space indents, a final newline", () => {
    for (const { text } of files) {
      assert.ok(text.endsWith("}\n"));
      assert.match(text, /^\{\n {2}"/);
    }
  });

  it("are the committed files, so none is stale (else run `npm run openapi`)", () => {
    for (const { file, text } of files) {
      assert.equal(readFileSync(file, "utf8"), text, file.href);
    }
    assert.deepEqual(staleOpenApiFiles(), []);
  });
});
