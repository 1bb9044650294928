import { isDeepStrictEqual } from "node:util";
import type { OpenApiDocument } from "../../src/openapi/openapi-document.js";
import {
  configuredOpenApiDocument,
  fillLimits,
  LIMIT_NAMES,
  type LimitLocation,
} from "../../src/openapi/openapi-endpoint.js";
import { DEFAULT_SERVICE_LIMITS, type ServiceLimits } from "../../src/openapi/service-limits.js";

/**
 * Two sets of limits the document is generated with, to see where they land.
 * Every value differs from the defaults, from the other set and from the
 * other limits, and none is a number the document states for another reason;
 * a collision would fail the check below, not go unseen.
 */
const PROBES: readonly [ServiceLimits, ServiceLimits] = [
  { maxLifetimeSeconds: 2_718_281, rateLimitPerMinute: 7_919, maxActivePerUser: 104_729 },
  { maxLifetimeSeconds: 3_141_592, rateLimitPerMinute: 6_577, maxActivePerUser: 99_989 },
];

const escapeKey = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");

/** The JSON Pointers where `a` and `b` hold different scalars; throws where their shapes differ. */
function differences(a: unknown, b: unknown, pointer = ""): string[] {
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((item, i) => differences(item, b[i], `${pointer}/${i}`));
  }
  if (
    typeof a === "object" &&
    a !== null &&
    !Array.isArray(a) &&
    typeof b === "object" &&
    b !== null &&
    !Array.isArray(b)
  ) {
    const keys = Object.keys(a);
    if (!isDeepStrictEqual(keys, Object.keys(b))) {
      throw new Error(`the limits change which keys ${pointer || "the document"} has`);
    }
    return keys.flatMap((key) =>
      differences(Reflect.get(a, key), Reflect.get(b, key), `${pointer}/${escapeKey(key)}`),
    );
  }
  if (a === b) {
    return [];
  }
  if (typeof a !== typeof b || (typeof a !== "number" && typeof a !== "string")) {
    throw new Error(`the limits change the shape of the document at ${pointer}`);
  }
  return [pointer];
}

function valueAt(document: unknown, pointer: string): unknown {
  let value = document;
  for (const key of pointer.split("/").slice(1)) {
    const plain = key.replaceAll("~1", "/").replaceAll("~0", "~");
    value = typeof value === "object" && value !== null ? Reflect.get(value, plain) : undefined;
  }
  return value;
}

/** The location of a value that differs between the probes: which limit, or the text's template. */
function locationOf(pointer: string, first: unknown, second: unknown): LimitLocation {
  const [a, b] = PROBES;
  if (typeof first === "number") {
    const name = LIMIT_NAMES.find((n) => a[n] === first && b[n] === second);
    if (name === undefined) {
      throw new Error(`${pointer} is a number computed from the limits, not one of them`);
    }
    return { pointer, number: name };
  }
  let text = String(first);
  for (const name of LIMIT_NAMES) {
    text = text.replace(new RegExp(`(?<![0-9])${a[name]}(?![0-9])`, "g"), `{${name}}`);
  }
  if (fillLimits(text, b) !== second) {
    throw new Error(
      `${pointer} does not state the limits as plain numbers (the service only substitutes them): ${String(second)}`,
    );
  }
  return { pointer, text };
}

/**
 * Where the configurable limits appear in the document `generate` makes:
 * found by generating it under two probe sets of limits and diffing, then
 * proved by setting each probe set (and the defaults) at those locations in
 * the default document and requiring exactly what `generate` makes for it.
 * Throws when the limits do more than change values in place (a key that
 * comes and goes, a text that words them differently): the service, which
 * only substitutes values, could not follow.
 */
export function findLimitLocations(
  generate: (limits: ServiceLimits) => OpenApiDocument,
): LimitLocation[] {
  // As JSON, the way it is committed and served: no undefined members.
  const asJson = (limits: ServiceLimits): OpenApiDocument =>
    JSON.parse(JSON.stringify(generate(limits))) as OpenApiDocument;
  const [a, b] = PROBES;
  const [first, second] = [asJson(a), asJson(b)];
  const locations = differences(first, second).map((pointer) =>
    locationOf(pointer, valueAt(first, pointer), valueAt(second, pointer)),
  );
  const base = asJson(DEFAULT_SERVICE_LIMITS);
  const cases: [ServiceLimits, OpenApiDocument][] = [
    [DEFAULT_SERVICE_LIMITS, base],
    [a, first],
    [b, second],
  ];
  for (const [limits, expected] of cases) {
    if (!isDeepStrictEqual(configuredOpenApiDocument(base, limits, locations), expected)) {
      throw new Error(
        `the limits ${JSON.stringify(limits)} change the document beyond the locations found`,
      );
    }
  }
  return locations;
}
