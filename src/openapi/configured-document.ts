import { fillLimits, type LimitLocation } from "./limit-locations.js";
import type { OpenApiDocument } from "./openapi-document.js";
import type { ServiceLimits } from "./service-limits.js";

/** The keys of an RFC 6901 JSON Pointer ("" is the whole document). */
function keysOf(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((key) => key.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** Sets the value at `pointer`, which must already exist in `root` (the committed document's shape). */
function setAt(root: object, pointer: string, value: number | string): void {
  const keys = keysOf(pointer);
  const last = keys.pop();
  let parent: unknown = root;
  for (const key of keys) {
    parent = typeof parent === "object" && parent !== null ? Reflect.get(parent, key) : undefined;
  }
  if (typeof parent !== "object" || parent === null || last === undefined || !(last in parent)) {
    throw new Error(`openapi.json has no value at ${pointer}: regenerate with npm run openapi`);
  }
  Reflect.set(parent, last, value);
}

/**
 * The document a service serves: the committed one (the default
 * configuration's) with the limits of the configuration in force (largest
 * `expiresIn`, rate limit, live-token cap) set at the locations `npm run
 * openapi` found for them, so that a client generating requests from the
 * schema sends only what this service accepts. The generator itself is
 * build-time code: the service never loads it.
 */
export function configuredOpenApiDocument(
  committed: OpenApiDocument,
  limits: ServiceLimits,
  locations: readonly LimitLocation[],
): OpenApiDocument {
  const document = structuredClone(committed);
  for (const location of locations) {
    const value =
      "number" in location ? limits[location.number] : fillLimits(location.text, limits);
    setAt(document, location.pointer, value);
  }
  return document;
}
