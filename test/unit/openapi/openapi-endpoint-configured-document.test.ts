import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readBufImage } from "../../../scripts/openapi/buf-image.js";
import { findLimitLocations } from "../../../scripts/openapi/find-limit-locations.js";
import { commentsFromRegistry } from "../../../scripts/openapi/proto-comments.js";
import { createTokenApiOpenApiDocument } from "../../../scripts/openapi/token-api-document.js";
import type { JsonSchema } from "../../../src/openapi/openapi-document.js";
import {
  configuredOpenApiDocument,
  loadLimitLocations,
  loadOpenApiDocument,
} from "../../../src/openapi/openapi-endpoint.js";
import { DEFAULT_SERVICE_LIMITS } from "../../../src/openapi/service-limits.js";
import { assertValidOpenApi31 } from "../../support/openapi-validators.js";

describe("the served document follows the configuration", () => {
  const committed = loadOpenApiDocument();
  const locations = loadLimitLocations();
  const limits = { maxLifetimeSeconds: 3600, rateLimitPerMinute: 5, maxActivePerUser: 7 };
  const configured = configuredOpenApiDocument(committed, limits, locations);
  const createRequest = (doc: typeof committed) =>
    doc.components?.schemas?.["perps.token.v1.CreateTokenRequest"] as JsonSchema;

  it("the committed locations are what the generator shows (else run `npm run openapi`)", () => {
    const comments = commentsFromRegistry(readBufImage());
    const found = findLimitLocations((l) => createTokenApiOpenApiDocument({ comments, limits: l }));
    assert.deepEqual(locations, found);
    // Each limit is set somewhere: the expiresIn maximum, the 400 and 429 texts.
    const text = JSON.stringify(locations);
    for (const name of Object.keys(DEFAULT_SERVICE_LIMITS)) {
      assert.match(text, new RegExp(`\\{${name}\\}`), name);
    }
    assert.ok(locations.some((l) => "number" in l && l.number === "maxLifetimeSeconds"));
  });

  it("with the default limits it is the committed document", () => {
    assert.deepEqual(
      configuredOpenApiDocument(committed, { ...DEFAULT_SERVICE_LIMITS }, locations),
      committed,
    );
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
      /at most 3600 \(this service's TOKEN_MAX_LIFETIME_SECONDS; default 31536000, 365 days\)/,
    );
    const text = JSON.stringify(configured.paths);
    assert.match(text, /this service allows 5 per minute/);
    assert.match(text, /this service allows 7: TOKEN_MAX_ACTIVE_PER_USER/);
    assert.match(text, /`expiresIn` is above 3600 \(TOKEN_MAX_LIFETIME_SECONDS\)/);
    // The committed document is left as it is.
    assert.equal(createRequest(committed).properties?.expiresIn?.maximum, 31_536_000);
  });

  it("a location the document does not have stops the service from starting", () => {
    assert.throws(
      () =>
        configuredOpenApiDocument(committed, limits, [
          {
            pointer: "/components/schemas/perps.token.v1.Gone/maximum",
            number: "maxActivePerUser",
          },
        ]),
      /openapi\.json has no value at \/components\/schemas\/perps\.token\.v1\.Gone\/maximum/,
    );
  });
});
