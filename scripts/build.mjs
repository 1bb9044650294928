#!/usr/bin/env node
// Builds the service's dist/, what `npm start` runs, after the client package's
// (client/dist/: the service imports its `@perps/token-client/protocol` and the
// contract's generated code, `@perps/token-client/contract/…`, and the console
// bundles its SDK; client/scripts/build.mjs):
//   dist/**.js, .d.ts  every module of src/ as ESM (tsc -p tsconfig.build.json),
//                      at the same depth as in src/, so new URL("../../x",
//                      import.meta.url) still finds the repository's files;
//   dist/**.lua, .mjs  src/**/*.lua copied next to the modules that read them,
//                      and src/**/*.mjs (plain JavaScript: node-gate.mjs);
//   dist/console/      the token console the public listener serves at `/`:
//                      src/console/ bundled for browsers (page, script,
//                      style, icon; it calls the service over "rest", so
//                      the SDK's connect and grpc code is left out).
// Plain JavaScript so that it runs before anything is compiled, without the
// tsx loader's start-up cost at every `npm start`. A clean build for `prepare`
// (npm ci, npm pack); with --if-stale (only when an input changed:
// client/scripts/dist-build.mjs) for `prestart` and the tests.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildDist } from "../client/scripts/dist-build.mjs";

const ROOT = join(import.meta.dirname, "..");
/**
 * What dist/ is made from besides every build's inputs (dist-build.mjs): the
 * console bundles the client's SDK.
 */
const INPUTS = ["client/dist/.built"];
/** The client package's build, run first. */
const CLIENT_BUILD = join(ROOT, "client/scripts/build.mjs");

function log(message) {
  process.stderr.write(`build: ${message}\n`);
}

/** Every file under `dir` whose name ends with `suffix`, relative to `dir`. */
function filesUnder(dir, suffix) {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((file) =>
    file.endsWith(suffix),
  );
}

/** src/'s Lua scripts and plain JavaScript modules (node-gate.mjs), which tsc does not emit. */
function copyUncompiled(out) {
  for (const file of [
    ...filesUnder(join(ROOT, "src"), ".lua"),
    ...filesUnder(join(ROOT, "src"), ".mjs"),
  ]) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    copyFileSync(join(ROOT, "src", file), join(out, file));
  }
}

/**
 * The SDK modules of the "connect" and "grpc" transports, which it imports on
 * first use only: the console uses "rest", so they stay out of its bundle
 * (protobuf and connect would triple its size).
 */
const NOT_IN_CONSOLE = /^\.\/(rpc-calls|connect-transport|grpc-transport)\.js$/;
/** Where the console's imports of `@perps/token-client` lead (the client's ESM build). */
const CLIENT_SDK = join(ROOT, "client/dist/sdk");

/** The token console: its page and icon as they are, its script and style bundled and minified. */
async function buildConsole(esbuild, out) {
  const src = join(ROOT, "src/console");
  const dest = join(out, "console");
  const restOnly = {
    name: "rest-only",
    setup(build) {
      build.onResolve({ filter: NOT_IN_CONSOLE }, (args) =>
        args.importer.startsWith(CLIENT_SDK) ? { path: args.path, external: true } : undefined,
      );
    },
  };
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { console: "src/console/main.ts" },
    outdir: dest,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["chrome120", "firefox130", "safari17"],
    minify: true,
    legalComments: "none",
    tsconfig: join(src, "tsconfig.json"),
    plugins: [restOnly],
    logLevel: "warning",
  });
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { console: "src/console/console.css" },
    outdir: dest,
    bundle: true,
    minify: true,
    logLevel: "warning",
  });
  for (const file of ["index.html", "icon.svg"]) {
    copyFileSync(join(src, file), join(dest, file));
  }
}

/** The client package's dist/, when stale (the service's build needs its declarations). */
function buildClient() {
  try {
    execFileSync(process.execPath, [CLIENT_BUILD, "--if-stale"], { stdio: "inherit" });
    return true;
  } catch {
    log("the client package's build failed: dist/ left as it was");
    process.exitCode = 1;
    return false;
  }
}

/** What the service's dist/ has besides tsc's output. */
async function steps(esbuild, out) {
  copyUncompiled(out);
  await buildConsole(esbuild, out);
}

if (buildClient()) {
  await buildDist({ root: ROOT, inputs: INPUTS, keptFile: "main.js", log, steps });
}
