import { readdirSync } from "node:fs";
import { join } from "node:path";

/** The modules of src/openapi/ the service runs; every other one is the generator's (build time only). */
export const SERVED_OPENAPI_MODULES: readonly string[] = [
  "committed-document.js",
  "configured-document.js",
  "limit-locations.js",
  "openapi-document.js",
  "openapi-endpoint.js",
  "service-limits.js",
];

/** The generator's modules in a built `dist/`, relative to the folder that holds it (`dist/openapi/…`). */
export function openApiGeneratorModules(root: string): string[] {
  return readdirSync(join(root, "dist/openapi"))
    .filter((file) => file.endsWith(".js") && !SERVED_OPENAPI_MODULES.includes(file))
    .map((file) => `dist/openapi/${file}`);
}
