import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { readBufImage } from "./buf-image.js";
import { OPENAPI_FILE } from "./committed-document.js";
import { commentsFromRegistry } from "./proto-comments.js";
import { createTokenApiOpenApiDocument } from "./token-api-document.js";

const repositoryRoot = new URL("../../", import.meta.url);

/**
 * The text of openapi.json: the token API's document, with the proto
 * comments of a `buf build` image as descriptions, formatted by biome (as
 * `npm run lint` checks every JSON file), so it ends in a newline. Needs the
 * devDependencies buf and biome.
 */
export function generateOpenApiFileText(): string {
  const comments = commentsFromRegistry(readBufImage());
  const json = JSON.stringify(createTokenApiOpenApiDocument({ comments }), null, 2);
  const biome = fileURLToPath(new URL("node_modules/.bin/biome", repositoryRoot));
  return execFileSync(biome, ["format", `--stdin-file-path=${fileURLToPath(OPENAPI_FILE)}`], {
    cwd: fileURLToPath(repositoryRoot),
    input: json,
    encoding: "utf8",
  });
}

/** `npm run openapi`: writes openapi.json. */
export function writeOpenApiFile(): void {
  writeFileSync(OPENAPI_FILE, generateOpenApiFileText());
}

/** `npm run check:openapi`: true when openapi.json is what the descriptors generate now. */
export function isOpenApiFileCurrent(): boolean {
  let committed: string;
  try {
    committed = readFileSync(OPENAPI_FILE, "utf8");
  } catch {
    return false;
  }
  return committed === generateOpenApiFileText();
}
