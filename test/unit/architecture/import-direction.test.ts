import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const SRC = fileURLToPath(new URL("../../../src/", import.meta.url));

/**
 * The service's layers, top to bottom: a request enters at `server`, the
 * `gateway` turns REST into calls, the services (`token`, `user-key`) check
 * and decide, `store` keeps tokens and keys, `redis` connects. A folder
 * imports only its own layer and the layers below it.
 */
const SERVICE_SIDE: readonly (readonly string[])[] = [
  // Start-up: worker processes, the embedded Redis.
  ["main.ts", "process"],
  // Listeners, protocols, interceptors, plain endpoints; wires everything.
  ["server"],
  // The OpenAPI document, built from the gateway's routes and the services' rules at
  // build time (`npm run openapi`); the service loads only the modules that serve
  // it (test/integration/service-module-graph.test.ts).
  ["openapi"],
  // REST to RPC transcoding, HTTP statuses of RPC codes.
  ["gateway"],
  // Where a request is checked: the proto's buf.validate rules, on every protocol.
  ["validation"],
  // The services: request rules, signatures, outcomes to client answers.
  ["token", "user-key"],
  // Everything that speaks to Redis about tokens and keys.
  ["store"],
  // Generic Redis: client, topology, server process, failure detection; and the
  // typed settings (parsed once by main.ts), which name the Redis topology.
  ["redis", "config"],
  // Support any layer may use.
  ["http", "metrics", "log", "crypto"],
  // Shared with the clients (below).
  ["protocol", "gen"],
];

/**
 * The clients' layers: the CLI and the token console (a page the service
 * serves, but a client of its public REST contract) over the SDK over what
 * they share with the service.
 */
const CLIENT_SIDE: readonly (readonly string[])[] = [
  ["cli", "console"],
  ["sdk"],
  ["protocol", "gen"],
];

/** Layers between the listeners and the store: they reach Redis only through the store. */
const THROUGH_THE_STORE = ["openapi", "gateway", "validation", "token", "user-key"];

/** Folders that must not depend on the RPC framework: their failures are their own. */
const WITHOUT_CONNECT = ["store", "redis"];

/** The layer index of `folder` in `side`, or undefined when the side has no such folder. */
function layerOf(side: readonly (readonly string[])[], folder: string): number | undefined {
  const index = side.findIndex((layer) => layer.includes(folder));
  return index === -1 ? undefined : index;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return sourceFiles(path);
    }
    return /\.(ts|js|mjs|cjs)$/.test(entry.name) ? [path] : [];
  });
}

/** The top-level entry of src/ that `path` lies in ("token", "main.ts"), or undefined outside src/. */
function folderOf(path: string): string | undefined {
  const rel = relative(SRC, path);
  return rel.startsWith("..") ? undefined : rel.split(sep)[0];
}

interface Import {
  file: string;
  specifier: string;
}

/** Every import, export-from and dynamic import of every source file in src/. */
function allImports(): Import[] {
  return sourceFiles(SRC).flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, "utf8"), true, true)
      .importedFiles.map(({ fileName }) => ({ file, specifier: fileName })),
  );
}

/** Why `from` may not import `to` (folders of src/), or undefined when it may. */
function violation(from: string, to: string): string | undefined {
  if (from === to) {
    return undefined;
  }
  if (to === "redis" && THROUGH_THE_STORE.includes(from)) {
    return `${from} reaches Redis only through the store`;
  }
  for (const side of [SERVICE_SIDE, CLIENT_SIDE]) {
    const fromLayer = layerOf(side, from);
    if (fromLayer === undefined) {
      continue;
    }
    const toLayer = layerOf(side, to);
    if (toLayer === undefined) {
      return `${to} is not on ${from}'s side`;
    }
    return toLayer < fromLayer ? `${to} is a layer above ${from}` : undefined;
  }
  return `${from} has no layer`;
}

describe("architecture", () => {
  const imports = allImports();

  it("finds the imports it checks", () => {
    assert.ok(imports.filter((i) => i.specifier.startsWith("../")).length > 100);
    assert.ok(imports.some((i) => i.specifier === "@connectrpc/connect"));
  });

  it("every top-level entry of src/ has a layer", () => {
    for (const entry of readdirSync(SRC)) {
      const sides = [SERVICE_SIDE, CLIENT_SIDE].filter((s) => layerOf(s, entry) !== undefined);
      assert.ok(sides.length > 0, `src/${entry} has no layer: add it to this test's table`);
    }
  });

  it("imports point down the layers (server → gateway → service → store → redis), never up", () => {
    const wrong: string[] = [];
    for (const { file, specifier } of imports) {
      if (!specifier.startsWith(".")) {
        continue;
      }
      const from = folderOf(file);
      const to = folderOf(resolve(dirname(file), specifier));
      const rel = relative(SRC, file);
      if (from === undefined || to === undefined) {
        wrong.push(`src/${rel} imports ${specifier}, outside src/`);
        continue;
      }
      const why = violation(from, to);
      if (why !== undefined) {
        wrong.push(`src/${rel} imports ${specifier}: ${why}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it("the SDK and the CLI import nothing of the service's own code; the services no Redis", () => {
    assert.equal(violation("sdk", "token"), "token is not on sdk's side");
    assert.equal(violation("sdk", "store"), "store is not on sdk's side");
    assert.equal(violation("cli", "server"), "server is not on cli's side");
    assert.equal(violation("sdk", "protocol"), undefined);
    assert.equal(violation("server", "sdk"), "sdk is not on server's side");
    assert.equal(violation("token", "redis"), "token reaches Redis only through the store");
  });

  it(`${WITHOUT_CONNECT.join(" and ")} build no ConnectError: they throw their own errors`, () => {
    const wrong = imports
      .filter(({ file, specifier }) => {
        const folder = folderOf(file);
        return (
          folder !== undefined &&
          WITHOUT_CONNECT.includes(folder) &&
          specifier.startsWith("@connectrpc/")
        );
      })
      .map(({ file, specifier }) => `src/${relative(SRC, file)} imports ${specifier}`);
    assert.deepEqual(wrong, []);
  });
});
