import { readFileSync } from "node:fs";
import type { ServiceLimits } from "./service-limits.js";

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
