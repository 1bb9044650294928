import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readBufImage } from "../../../src/openapi/buf-image.js";
import { loadOpenApiDocument } from "../../../src/openapi/committed-document.js";
import { configuredOpenApiDocument } from "../../../src/openapi/configured-document.js";
import type { JsonSchema } from "../../../src/openapi/openapi-document.js";
import { commentsFromRegistry } from "../../../src/openapi/proto-comments.js";
import { DEFAULT_SERVICE_LIMITS } from "../../../src/openapi/service-limits.js";
import { createTokenApiOpenApiDocument } from "../../../src/openapi/token-api-document.js";
import { assertValidOpenApi31 } from "./openapi-test-support.js";

describe("the served document follows the configuration", () => {
  const committed = loadOpenApiDocument();
  const limits = { maxLifetimeSeconds: 3600, rateLimitPerMinute: 5, maxActivePerUser: 7 };
  const configured = configuredOpenApiDocument(committed, limits);
  const createRequest = (doc: typeof committed) =>
    doc.components?.schemas?.["perps.token.v1.CreateTokenRequest"] as JsonSchema;

  it("with the default limits it is the committed document", () => {
    assert.equal(configuredOpenApiDocument(committed, { ...DEFAULT_SERVICE_LIMITS }), committed);
  });

  it("with others, what a build would generate for them, proto comments included", () => {
    const comments = commentsFromRegistry(readBufImage());
    const generated = JSON.parse(
      JSON.stringify(createTokenApiOpenApiDocument({ comments, limits })),
    );
    assert.deepEqual(configured, generated);
  });

  it("states the configured limits", async () => {
    await assertValidOpenApi31(configured);
    const expiresIn = createRequest(configured).properties?.expiresIn;
    assert.equal(expiresIn?.maximum, 3600);
    assert.match(
      expiresIn?.description ?? "",
      /at most 3600, this service's TOKEN_MAX_LIFETIME_SECONDS \(default 31536000 \(365 days\)\)/,
    );
    const text = JSON.stringify(configured.paths);
    assert.match(text, /this service allows 5 per minute/);
    assert.match(text, /this service allows 7: TOKEN_MAX_ACTIVE_PER_USER/);
    // The committed document is left as it is.
    assert.equal(createRequest(committed).properties?.expiresIn?.maximum, 31_536_000);
  });
});
