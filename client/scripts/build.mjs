#!/usr/bin/env node
// Builds the client package's dist/, what `npm pack` ships and the service loads
// (`@perps/token-client/protocol`, and the contract's generated code as
// `@perps/token-client/contract/<proto path>_pb.js`, dist/gen/):
//   dist/**.js, .d.ts  every module of src/ as ESM (tsc -p tsconfig.build.json);
//   dist/cjs/          the entries' modules as CommonJS, one file per module (so
//                      "." and "./node" share TokenApiError & co.), with the
//                      ESM-only @noble/ed25519 inlined for Node < 20.19;
//   dist/browser/      the root entry bundled for pages without a bundler, its
//                      dependencies included: index.js (ESM, `<script
//                      type="module">`) and index.global.js (a classic script
//                      defining the global `PerpsTokenClient`).
// Plain JavaScript so that it runs before anything is compiled. A clean build
// for `npm pack` and `npm run build`; with --if-stale (only when an input
// changed: dist-build.mjs) for `prepack` and the service's build.
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { buildDist } from "./dist-build.mjs";

const ROOT = join(import.meta.dirname, "..");
/** What dist/ is made from besides every build's inputs (dist-build.mjs). */
const INPUTS = ["../tsconfig.json", "scripts/build-freshness.mjs", "scripts/dist-build.mjs"];
/**
 * The package's entries; their import graph is what dist/cjs/ holds. Every
 * generated module is one: "./contract/*.js" exports each of them.
 */
const ENTRIES = [
  "src/sdk/index.ts",
  "src/sdk/node.ts",
  "src/protocol/index.ts",
  ...readdirSync(join(ROOT, "src/gen"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith("_pb.ts"))
    .map((file) => `src/gen/${file.split(sep).join("/")}`)
    .sort(),
];
/** Dependencies that cannot be require()d before Node 20.19 (ESM only): inlined into dist/cjs. */
const INLINED_IN_CJS = ["@noble/ed25519"];

function log(message) {
  process.stderr.write(`build (client): ${message}\n`);
}

/**
 * The entries' modules as CommonJS, each its own file requiring its
 * neighbours by their relative paths, plus the declarations they need. A
 * package.json of "type": "commonjs" makes Node and TypeScript read dist/cjs/
 * as CommonJS.
 */
async function buildCommonJs(esbuild, out) {
  const graph = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    bundle: true,
    write: false,
    outdir: "graph",
    metafile: true,
    packages: "external",
    platform: "neutral",
    logLevel: "silent",
  });
  const modules = Object.keys(graph.metafile.inputs).filter((path) => path.startsWith("src/"));
  const keepModulesApart = {
    name: "keep-modules-apart",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === "entry-point") {
          return undefined;
        }
        if (args.path.startsWith(".")) {
          return { path: args.path, external: true };
        }
        const inlined = INLINED_IN_CJS.some(
          (name) => args.path === name || args.path.startsWith(`${name}/`),
        );
        return inlined ? undefined : { path: args.path, external: true };
      });
    },
  };
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: modules,
    outbase: "src",
    outdir: join(out, "cjs"),
    bundle: true,
    format: "cjs",
    platform: "neutral",
    target: "es2022",
    // import() of a computed name (the lazy gRPC transport) becomes require():
    // the CommonJS build must load connect-node's CommonJS build, or its
    // ConnectError would not be the one our code checks for.
    supported: { "dynamic-import": false },
    plugins: [keepModulesApart],
    logLevel: "warning",
  });
  writeFileSync(join(out, "cjs/package.json"), '{ "type": "commonjs" }\n');
  copyDeclarations(out, join(out, "cjs"));
}

/**
 * The root entry for pages without a bundler: one file each, dependencies
 * included, minified. The lazy "connect" and "grpc" transports are inlined
 * (no chunks to host beside it); "grpc" still refuses to run outside Node.
 */
async function buildBrowser(esbuild, out) {
  const common = {
    absWorkingDir: ROOT,
    entryPoints: ["src/sdk/index.ts"],
    bundle: true,
    platform: "browser",
    target: ["chrome120", "firefox130", "safari17"],
    minify: true,
    legalComments: "eof",
    logLevel: "warning",
  };
  await esbuild.build({ ...common, format: "esm", outfile: join(out, "browser/index.js") });
  await esbuild.build({
    ...common,
    format: "iife",
    globalName: "PerpsTokenClient",
    outfile: join(out, "browser/index.global.js"),
  });
}

/** Copies the .d.ts files reachable from the entries' declarations into `to`. */
function copyDeclarations(from, to) {
  const queue = ENTRIES.map((entry) => entry.replace(/^src\//, "").replace(/\.ts$/, ".d.ts"));
  const seen = new Set();
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) {
      continue;
    }
    seen.add(file);
    const text = readFileSync(join(from, file), "utf8");
    mkdirSync(dirname(join(to, file)), { recursive: true });
    writeFileSync(join(to, file), text);
    for (const match of text.matchAll(/(?:from\s*|import\s*\(\s*)["'](\.\.?\/[^"']+)\.js["']/g)) {
      queue.push(relative(from, join(from, dirname(file), `${match[1]}.d.ts`)));
    }
  }
}

/** What the package's dist/ has besides tsc's output. */
async function steps(esbuild, out) {
  // The package's bin: npm marks it executable on install, but not when a
  // linked checkout is rebuilt later.
  chmodSync(join(out, "cli", "perps-tokens.js"), 0o755);
  await buildCommonJs(esbuild, out);
  await buildBrowser(esbuild, out);
}

await buildDist({ root: ROOT, inputs: INPUTS, keptFile: "protocol/index.js", log, steps });
