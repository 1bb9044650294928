// The OpenAPI document as the service serves it: the committed openapi.json
// (loadOpenApiDocument), with the limits of the configuration in force set at
// the places openapi-limits.json names (loadLimitLocations,
// configuredOpenApiDocument), answered at `GET /openapi.json`
// (createOpenApiEndpoint). `npm run openapi` writes both files; its generator
// is build-time code (scripts/openapi/), and nothing here imports it.

import { readFileSync } from "node:fs";
import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import type { OpenApiDocument } from "./openapi-document.js";
import type { ServiceLimits } from "./service-limits.js";

/** The committed document: openapi.json at the repository root, written by `npm run openapi`. */
export const OPENAPI_FILE = new URL("../../openapi.json", import.meta.url);

/**
 * Reads the committed OpenAPI document (`npm run check:openapi` keeps it
 * equal to what the descriptors generate). Throws when the file is missing
 * or is not an OpenAPI 3.1 document, so a broken deployment fails at start-up.
 */
export function loadOpenApiDocument(file: URL | string = OPENAPI_FILE): OpenApiDocument {
  const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
  if (!isOpenApi31(parsed)) {
    throw new Error(`${String(file)} is not an OpenAPI 3.1 document`);
  }
  return parsed;
}

function isOpenApi31(value: unknown): value is OpenApiDocument {
  return (
    typeof value === "object" &&
    value !== null &&
    "openapi" in value &&
    typeof value.openapi === "string" &&
    value.openapi.startsWith("3.1.") &&
    "paths" in value &&
    typeof value.paths === "object"
  );
}

/** The name of one configurable limit the document states. */
export type LimitName = keyof ServiceLimits;

// A record, so that a limit added to ServiceLimits fails to compile until it is named here.
const EVERY_LIMIT: { readonly [name in LimitName]: true } = {
  maxLifetimeSeconds: true,
  rateLimitPerMinute: true,
  maxActivePerUser: true,
};

/** Every configurable limit the document states. */
export const LIMIT_NAMES = Object.keys(EVERY_LIMIT) as readonly LimitName[];

/**
 * One value of openapi.json that depends on the configured limits, at a JSON
 * Pointer (RFC 6901): either a number that is one limit (`number`), or a
 * text where `{maxLifetimeSeconds}` and the like stand for the limits.
 */
export type LimitLocation =
  | { readonly pointer: string; readonly number: LimitName }
  | { readonly pointer: string; readonly text: string };

/** What openapi-limits.json holds. */
export interface LimitLocationsFile {
  readonly $comment: string;
  readonly locations: readonly LimitLocation[];
}

/**
 * openapi-limits.json at the repository root, beside openapi.json: written
 * by `npm run openapi` (which finds the locations by generating the document
 * under other limits), checked by `npm run check:openapi`.
 */
export const LIMIT_LOCATIONS_FILE = new URL("../../openapi-limits.json", import.meta.url);

function isLimitName(value: unknown): value is LimitName {
  return LIMIT_NAMES.some((name) => name === value);
}

function isLimitLocation(value: unknown): value is LimitLocation {
  if (typeof value !== "object" || value === null || !("pointer" in value)) {
    return false;
  }
  if (typeof value.pointer !== "string" || !value.pointer.startsWith("/")) {
    return false;
  }
  return "number" in value
    ? isLimitName(value.number)
    : "text" in value && typeof value.text === "string";
}

/**
 * Reads the committed limit locations. Throws when the file is missing or
 * not of this shape, so a broken deployment fails at start-up.
 */
export function loadLimitLocations(file: URL | string = LIMIT_LOCATIONS_FILE): LimitLocation[] {
  const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
  const locations =
    typeof parsed === "object" && parsed !== null && "locations" in parsed
      ? parsed.locations
      : undefined;
  if (!Array.isArray(locations) || !locations.every(isLimitLocation)) {
    throw new Error(`${String(file)} is not a list of limit locations`);
  }
  return locations;
}

/** `text` with each `{limit}` replaced by that limit's value; other braces stay. */
export function fillLimits(text: string, limits: ServiceLimits): string {
  return text.replace(/\{(\w+)\}/g, (placeholder: string, name: string) =>
    isLimitName(name) ? String(limits[name]) : placeholder,
  );
}

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

export interface OpenApiEndpointOptions {
  /** URL path the document is served at. Default "/openapi.json". */
  path?: string;
}

/**
 * `GET /openapi.json` (and HEAD): the document as `application/json`.
 * Serialized once, up front. Returns false for any other request, so the
 * caller passes it on (like createHealthEndpoints).
 */
export function createOpenApiEndpoint(
  document: OpenApiDocument,
  opts: OpenApiEndpointOptions = {},
): Endpoint {
  const path = opts.path ?? "/openapi.json";
  const body = Buffer.from(JSON.stringify(document), "utf8");
  const headers = {
    "content-type": "application/json",
    "content-length": String(body.byteLength),
    // Changes only with a deployment; clients may keep it but should revalidate.
    "cache-control": "no-cache",
  };
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    if ((req.method !== "GET" && req.method !== "HEAD") || requestPath(req) !== path) {
      return false;
    }
    res.writeHead(200, headers);
    if (req.method === "HEAD") {
      res.end();
    } else {
      res.end(body);
    }
    return true;
  };
  return { answer };
}
