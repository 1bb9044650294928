// npm run openapi: writes openapi.json from the proto descriptors.
// npm run check:openapi (--check): fails when openapi.json is not what they generate.
import { isOpenApiFileCurrent, writeOpenApiFile } from "../src/openapi/openapi-file.js";

if (process.argv.includes("--check")) {
  if (!isOpenApiFileCurrent()) {
    console.error("openapi.json is out of date: run `npm run openapi` and commit the result");
    process.exit(1);
  }
  console.log("openapi.json is up to date");
} else {
  writeOpenApiFile();
  console.log("wrote openapi.json");
}
