import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  LIMIT_LOCATIONS_FILE,
  type LimitLocationsFile,
  OPENAPI_FILE,
} from "../../src/openapi/openapi-endpoint.js";
import { readBufImage } from "./buf-image.js";
import { findLimitLocations } from "./find-limit-locations.js";
import { commentsFromRegistry } from "./proto-comments.js";
import { createTokenApiOpenApiDocument } from "./token-api-document.js";

const repositoryRoot = new URL("../../", import.meta.url);

/** `value` as biome formats it (as `npm run lint` checks every JSON file), ending in a newline. */
function formatJson(value: unknown, file: URL): string {
  const biome = fileURLToPath(new URL("node_modules/.bin/biome", repositoryRoot));
  return execFileSync(biome, ["format", `--stdin-file-path=${fileURLToPath(file)}`], {
    cwd: fileURLToPath(repositoryRoot),
    input: JSON.stringify(value, null, 2),
    encoding: "utf8",
  });
}

/**
 * The texts of openapi.json (the token API's document, with the proto
 * comments of a `buf build` image as descriptions) and of
 * openapi-limits.json (where the configurable limits appear in it, which
 * the service sets for the configuration in force), by file. Needs the
 * devDependencies buf and biome.
 */
export function generateOpenApiFiles(): { file: URL; text: string }[] {
  const comments = commentsFromRegistry(readBufImage());
  const limitLocations: LimitLocationsFile = {
    $comment:
      "Written by `npm run openapi`, beside openapi.json: where each configurable limit appears in it (JSON Pointers; {name} in a text stands for that limit). The service sets the configured limits there (src/openapi/openapi-endpoint.ts), so it never runs the generator.",
    locations: findLimitLocations((limits) => createTokenApiOpenApiDocument({ comments, limits })),
  };
  return [
    {
      file: OPENAPI_FILE,
      text: formatJson(createTokenApiOpenApiDocument({ comments }), OPENAPI_FILE),
    },
    { file: LIMIT_LOCATIONS_FILE, text: formatJson(limitLocations, LIMIT_LOCATIONS_FILE) },
  ];
}

/** `npm run openapi`: writes openapi.json and openapi-limits.json. */
export function writeOpenApiFiles(): void {
  for (const { file, text } of generateOpenApiFiles()) {
    writeFileSync(file, text);
  }
}

/** The repository-relative names of the committed files that differ from what the descriptors generate now. */
export function staleOpenApiFiles(): string[] {
  return generateOpenApiFiles()
    .filter(({ file, text }) => {
      try {
        return readFileSync(file, "utf8") !== text;
      } catch {
        return true;
      }
    })
    .map(({ file }) => nameOf(file));
}

const nameOf = (file: URL) => file.href.slice(repositoryRoot.href.length);

/** The repository-relative names of the files `npm run openapi` writes. */
export const OPENAPI_FILE_NAMES = [OPENAPI_FILE, LIMIT_LOCATIONS_FILE].map(nameOf);
