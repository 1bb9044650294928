import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readBufImage } from "../../../scripts/openapi/buf-image.js";
import { commentsFromRegistry } from "../../../scripts/openapi/proto-comments.js";
import { createTokenApiOpenApiDocument } from "../../../scripts/openapi/token-api-document.js";
import { loadOpenApiDocument } from "../../../src/openapi/openapi-endpoint.js";
import { assertValidOpenApi31 } from "../../support/openapi-validators.js";

describe("the committed openapi.json", () => {
  const committed = loadOpenApiDocument();

  it("is valid OpenAPI 3.1", async () => {
    await assertValidOpenApi31(committed);
  });

  it("is what the descriptors generate (else run `npm run openapi`)", () => {
    const comments = commentsFromRegistry(readBufImage());
    const generated = JSON.parse(JSON.stringify(createTokenApiOpenApiDocument({ comments })));
    assert.deepEqual(committed, generated);
  });

  it("loading refuses a file that is not OpenAPI 3.1", () => {
    assert.throws(
      () => loadOpenApiDocument(new URL("../../../package.json", import.meta.url)),
      /is not an OpenAPI 3\.1 document/,
    );
  });
});
