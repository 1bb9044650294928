import type { OpenApiDocument } from "./openapi-document.js";
import { DEFAULT_SERVICE_LIMITS, type ServiceLimits, sameLimits } from "./service-limits.js";
import { createTokenApiOpenApiDocument } from "./token-api-document.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `document` with every value that differs between `from` and `to` taken
 * from `to`: where the two generated documents agree, the committed one
 * stays as it is (with its proto comments, which only a build can read).
 */
function overlay(document: Json | undefined, from: Json | undefined, to: Json | undefined): Json {
  if (to === undefined) {
    throw new Error("overlay: a value the configuration removes");
  }
  if (JSON.stringify(from) === JSON.stringify(to)) {
    return document ?? to;
  }
  if (Array.isArray(document) && Array.isArray(from) && Array.isArray(to)) {
    if (from.length === to.length && document.length === to.length) {
      return to.map((value, i) => overlay(document[i], from[i], value));
    }
    return to;
  }
  if (isObject(document) && isObject(from) && isObject(to)) {
    const result: { [key: string]: Json } = { ...document };
    for (const [key, value] of Object.entries(to)) {
      result[key] = overlay(document[key], from[key], value);
    }
    return result;
  }
  return to;
}

const asJson = (document: OpenApiDocument): Json => JSON.parse(JSON.stringify(document)) as Json;

/**
 * The document a service serves: the committed one (the default
 * configuration's) with the limits of the configuration in force (largest
 * `expiresIn`, rate limit, live-token cap), so that a client generating
 * requests from the schema sends only what this service accepts. With the
 * default limits it is the committed document itself.
 */
export function configuredOpenApiDocument(
  committed: OpenApiDocument,
  limits: ServiceLimits,
): OpenApiDocument {
  if (sameLimits(limits, DEFAULT_SERVICE_LIMITS)) {
    return committed;
  }
  const from = asJson(createTokenApiOpenApiDocument());
  const to = asJson(createTokenApiOpenApiDocument({ limits }));
  return overlay(asJson(committed), from, to) as unknown as OpenApiDocument;
}
