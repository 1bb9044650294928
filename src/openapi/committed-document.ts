import { readFileSync } from "node:fs";
import type { OpenApiDocument } from "./openapi-document.js";

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
