import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { build } from "esbuild";
import { buildIfStale } from "../support/build.js";
import { REPO_ROOT } from "../support/markdown-blocks.js";
import { SERVED_OPENAPI_MODULES } from "../support/openapi-modules.js";

// The OpenAPI generator runs at build time only (`npm run openapi`): the
// service serves the committed openapi.json with its limits set at the
// locations of openapi-limits.json. Nothing the service runs may reach the
// generator, or a production install would load (and need) it again.

describe("the service's module graph (dist/main.js, what npm start and every worker run)", () => {
  let reached: string[];
  let staticImports: Map<string, string[]>;
  before(async () => {
    buildIfStale();
    // Every module dist/main.js imports, statically or by import("…"), transitively.
    const result = await build({
      absWorkingDir: REPO_ROOT,
      entryPoints: ["dist/main.js"],
      bundle: true,
      write: false,
      metafile: true,
      packages: "external",
      platform: "node",
      format: "esm",
      logLevel: "silent",
    });
    reached = Object.keys(result.metafile.inputs);
    staticImports = new Map(
      Object.entries(result.metafile.inputs).map(([module, input]) => [
        module,
        input.imports.filter((i) => i.kind === "import-statement").map((i) => i.path),
      ]),
    );
  });

  it("is found: the server, the store and the served OpenAPI modules are in it", () => {
    for (const module of ["dist/server/app.js", "dist/store/token-store.js"]) {
      assert.ok(reached.includes(module), `${module} in ${reached.length} modules`);
    }
    assert.ok(reached.includes("dist/openapi/openapi-endpoint.js"), "openapi-endpoint.js");
  });

  it("reaches no module of the OpenAPI generator, nor anything else outside dist/", () => {
    // The generator lives in scripts/openapi/, outside the build: a service
    // module importing it would be reached here as a path outside dist/.
    assert.deepEqual(
      reached.filter((module) => !module.startsWith("dist/")),
      [],
    );
    const served = SERVED_OPENAPI_MODULES.map((module) => `dist/openapi/${module}`);
    assert.deepEqual(
      reached.filter((module) => module.startsWith("dist/openapi/") && !served.includes(module)),
      [],
    );
  });

  it("loads the service only where it runs: the primary's own imports stop short of it", () => {
    // What a primary with workers loads: dist/main.js and its static imports,
    // not the import("./process/run-service.js") that workers make.
    const loaded = new Set<string>();
    const visit = (module: string) => {
      if (!loaded.has(module)) {
        loaded.add(module);
        for (const next of staticImports.get(module) ?? []) {
          visit(next);
        }
      }
    };
    visit("dist/main.js");
    assert.ok(loaded.has("dist/process/workers.js"), [...loaded].join(" "));
    for (const module of [
      "process/run-service",
      "server/app",
      "store/token-store",
      "redis/redis-client",
    ]) {
      assert.ok(!loaded.has(`dist/${module}.js`), `the primary loads dist/${module}.js`);
      assert.ok(reached.includes(`dist/${module}.js`), `a worker loads dist/${module}.js`);
    }
  });
});
