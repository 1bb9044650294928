/** The modules of src/openapi/ the service runs: they serve the committed document. */
export const SERVED_OPENAPI_MODULES: readonly string[] = [
  "openapi-document.js",
  "openapi-endpoint.js",
  "service-limits.js",
];

/** The OpenAPI generator's folder: build-time code, which a production install can do without. */
export const OPENAPI_GENERATOR = "scripts/openapi";
