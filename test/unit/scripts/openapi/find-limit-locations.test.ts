import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findLimitLocations } from "../../../../scripts/openapi/find-limit-locations.js";
import type { OpenApiDocument } from "../../../../src/openapi/openapi-document.js";
import type { ServiceLimits } from "../../../../src/openapi/service-limits.js";

/** A small document of the generator's kind, its limits placed by `describe`. */
function documentWith(extra: Record<string, unknown>): OpenApiDocument {
  return {
    openapi: "3.1.0",
    info: { title: "t", version: "1" },
    paths: {},
    components: { schemas: { "a/b": { type: "object", ...extra } } },
  } as OpenApiDocument;
}

describe("findLimitLocations", () => {
  it("finds numbers and texts, with JSON Pointer escapes, wherever the limits land", () => {
    const locations = findLimitLocations((l) =>
      documentWith({
        maximum: l.maxLifetimeSeconds,
        minimum: 1,
        description: `at most ${l.rateLimitPerMinute} per minute, ${l.maxActivePerUser} live, 7 days`,
        examples: [l.maxActivePerUser, 3],
      }),
    );
    assert.deepEqual(locations, [
      { pointer: "/components/schemas/a~1b/maximum", number: "maxLifetimeSeconds" },
      {
        pointer: "/components/schemas/a~1b/description",
        text: "at most {rateLimitPerMinute} per minute, {maxActivePerUser} live, 7 days",
      },
      { pointer: "/components/schemas/a~1b/examples/0", number: "maxActivePerUser" },
    ]);
  });

  it("finds none in a document the limits do not change", () => {
    assert.deepEqual(
      findLimitLocations(() => documentWith({ maximum: 5 })),
      [],
    );
  });

  const refusals: [string, (l: ServiceLimits) => OpenApiDocument, RegExp][] = [
    [
      "a key that only some limits bring",
      (l) => documentWith(l.rateLimitPerMinute > 7000 ? { maximum: 1 } : {}),
      /change which keys/,
    ],
    [
      "a number computed from a limit",
      (l) => documentWith({ maximum: l.maxLifetimeSeconds * 2 }),
      /a number computed from the limits/,
    ],
    [
      "a text that words a limit in its own way",
      (l) => documentWith({ description: `${l.maxLifetimeSeconds / 86_400} days` }),
      /does not state the limits as plain numbers/,
    ],
    [
      "a text that differs for the defaults only",
      (l) => documentWith({ description: l.maxActivePerUser === 1000 ? "the default" : "other" }),
      /does not state the limits as plain numbers|beyond the locations found/,
    ],
    [
      "a difference in kind",
      (l) => documentWith({ maximum: l.maxActivePerUser > 100_000 ? 1 : "one" }),
      /change the shape of the document/,
    ],
  ];
  for (const [what, generate, error] of refusals) {
    it(`refuses ${what}: the service could not follow it by substitution`, () => {
      assert.throws(() => findLimitLocations(generate), error);
    });
  }

  it("refuses wording that only the defaults get, which the probes never see", () => {
    assert.throws(
      () =>
        findLimitLocations((l) =>
          documentWith({
            description: `at most ${l.maxLifetimeSeconds}${l.maxLifetimeSeconds === 31_536_000 ? " (the default)" : ""}`,
          }),
        ),
      /the limits .* change the document beyond the locations found/,
    );
  });
});
