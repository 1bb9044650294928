// npm run openapi: writes openapi.json from the proto descriptors, and
// openapi-limits.json, where the configurable limits appear in it.
// npm run check:openapi (--check): fails when either is not what they generate.
import {
  OPENAPI_FILE_NAMES,
  staleOpenApiFiles,
  writeOpenApiFiles,
} from "./openapi/openapi-file.js";

if (process.argv.includes("--check")) {
  const stale = staleOpenApiFiles();
  if (stale.length > 0) {
    console.error(`${stale.join(", ")} out of date: run \`npm run openapi\` and commit the result`);
    process.exit(1);
  }
  console.log(`${OPENAPI_FILE_NAMES.join(", ")} up to date`);
} else {
  writeOpenApiFiles();
  console.log(`wrote ${OPENAPI_FILE_NAMES.join(", ")}`);
}
