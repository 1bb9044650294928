import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The repository's two packages: the service (the root) and the client (the workspace client/). */
interface Package {
  /** Folder of the package, relative to the repository. */
  readonly dir: string;
  /** Its sources' layers, top to bottom: a folder imports only its own layer and those below. */
  readonly layers: readonly (readonly string[])[];
}

/**
 * The service's layers: a request enters at `server`, `rest` turns REST
 * into calls, the services (`token`, `user-key`) check and decide, `store`
 * keeps tokens and keys, `redis` connects.
 */
const SERVICE: Package = {
  dir: ".",
  layers: [
    // Start-up: worker processes, the embedded Redis.
    ["main.ts", "process"],
    // Listeners, protocols, interceptors, plain endpoints; wires everything. The
    // check lane answers the hottest checks beside the pipeline, on its listeners.
    ["server", "check-lane"],
    // The OpenAPI document, built from the gateway's routes and the services' rules at
    // build time (`npm run openapi`); the service loads only the modules that serve
    // it (test/integration/service-module-graph.test.ts).
    ["openapi"],
    // REST to RPC transcoding; the call path every protocol shares; google.rpc.Status
    // answers and the HTTP statuses of RPC codes.
    ["rest", "call", "status"],
    // Who may call the admin RPCs: operators' credentials, their file, their check.
    ["admin-auth"],
    // Where a request is checked: the proto's buf.validate rules, on every protocol.
    ["validation"],
    // The services: request rules, signatures, outcomes to client answers.
    ["token", "user-key"],
    // Everything that speaks to Redis about tokens and keys.
    ["store"],
    // Generic Redis: client, topology, server process, failure detection; the
    // typed settings (parsed once by main.ts), which name the Redis topology; and
    // the OpenTelemetry tracing those settings turn on.
    ["redis", "config", "tracing"],
    // Support any layer may use.
    ["http", "metrics", "log", "crypto", "cache"],
    // The gRPC health and reflection services (the contract's messages come from the
    // client package: @perps/token-client/contract/…).
    ["gen"],
  ],
};

/** The client package: the CLI over the SDK over what it shares with the service. */
const CLIENT: Package = {
  dir: "client",
  layers: [["cli"], ["sdk"], ["protocol", "gen"]],
};

/** The token console: a page the service serves, bundled for browsers; a client of the REST contract. */
const CONSOLE = "console";

/** Layers between the listeners and the store: they reach Redis only through the store. */
const THROUGH_THE_STORE = ["openapi", "rest", "call", "status", "validation", "token", "user-key"];

/** Folders that must not depend on the RPC framework: their failures are their own. */
const WITHOUT_CONNECT = ["store", "redis"];

/**
 * Where the service may import Connect's non-public entry points
 * (`@connectrpc/connect/protocol…`, "internal code, does not follow semantic
 * versioning"): one folder, whose README says why each import exists.
 */
const CONNECT_INTERNALS_ROOM = join("server", "wire");

/** True for `@connectrpc/connect/protocol`, `/protocol-connect`, `/protocol-grpc`, `/protocol-grpc-web`. */
function isConnectInternal(specifier: string): boolean {
  return /^@connectrpc\/connect\/protocol(?:-[a-z-]+)?$/.test(specifier);
}

/**
 * The client package's name, and the entries of it the service's own code may
 * import: the shared protocol, and the contract's generated code (one module per
 * proto file, `${CONTRACT_ENTRY}/<proto path>_pb.js`).
 */
const CLIENT_NAME = "@perps/token-client";
const SHARED_ENTRY = `${CLIENT_NAME}/protocol`;
const CONTRACT_ENTRY = `${CLIENT_NAME}/contract`;

/** True for the imports of the client package that the service's own code may make. */
function isSharedEntry(specifier: string): boolean {
  return (
    specifier === SHARED_ENTRY || /^@perps\/token-client\/contract\/[\w/]+_pb\.js$/.test(specifier)
  );
}

/** The layer index of `folder`, or undefined when the package has no such folder. */
function layerOf(pkg: Package, folder: string): number | undefined {
  const index = pkg.layers.findIndex((layer) => layer.includes(folder));
  return index === -1 ? undefined : index;
}

function srcOf(pkg: Package): string {
  return join(ROOT, pkg.dir, "src");
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

/** The top-level entry of the package's src/ that `path` lies in ("token", "main.ts"), or undefined outside. */
function folderOf(pkg: Package, path: string): string | undefined {
  const rel = relative(srcOf(pkg), path);
  return rel.startsWith("..") ? undefined : rel.split(sep)[0];
}

interface Import {
  file: string;
  specifier: string;
}

/** Every import, export-from and dynamic import of every source file of the package. */
function allImports(pkg: Package): Import[] {
  return sourceFiles(srcOf(pkg)).flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, "utf8"), true, true)
      .importedFiles.map(({ fileName }) => ({ file, specifier: fileName })),
  );
}

/** Why `from` may not import `to` (folders of the package's src/), or undefined when it may. */
function violation(pkg: Package, from: string, to: string): string | undefined {
  if (from === to) {
    return undefined;
  }
  if (to === "redis" && THROUGH_THE_STORE.includes(from)) {
    return `${from} reaches Redis only through the store`;
  }
  const fromLayer = layerOf(pkg, from);
  if (fromLayer === undefined) {
    return `${from} has no layer`;
  }
  const toLayer = layerOf(pkg, to);
  if (toLayer === undefined) {
    return `${to} is not a layer of ${from}'s package`;
  }
  return toLayer < fromLayer ? `${to} is a layer above ${from}` : undefined;
}

/** The package a bare specifier names ("@scope/name" or "name"), undefined for node: and relative ones. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("node:")) {
    return undefined;
  }
  if (builtinModules.includes(specifier.split("/")[0] ?? "")) {
    return undefined;
  }
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function manifestOf(pkg: Package): Manifest {
  return JSON.parse(readFileSync(join(ROOT, pkg.dir, "package.json"), "utf8")) as Manifest;
}

describe("architecture", () => {
  const service = allImports(SERVICE);
  const client = allImports(CLIENT);
  const rel = (file: string) => relative(ROOT, file);

  it("finds the imports it checks", () => {
    assert.ok(service.filter((i) => i.specifier.startsWith("../")).length > 100);
    assert.ok(service.some((i) => i.specifier === "@connectrpc/connect"));
    assert.ok(service.some((i) => i.specifier === SHARED_ENTRY));
    assert.ok(service.some((i) => i.specifier.startsWith(`${CONTRACT_ENTRY}/`)));
    assert.ok(client.filter((i) => i.specifier.startsWith("../")).length > 30);
  });

  it("every top-level entry of each package's src/ has a layer", () => {
    for (const pkg of [SERVICE, CLIENT]) {
      for (const entry of readdirSync(srcOf(pkg))) {
        assert.ok(
          entry === CONSOLE || layerOf(pkg, entry) !== undefined,
          `${pkg.dir}/src/${entry} has no layer: add it to this test's table`,
        );
      }
    }
  });

  it("imports point down the layers (server → rest → call → service → store → redis; cli → sdk → protocol), never up, never out of the package", () => {
    const wrong: string[] = [];
    for (const [pkg, imports] of [
      [SERVICE, service],
      [CLIENT, client],
    ] as const) {
      for (const { file, specifier } of imports) {
        if (!specifier.startsWith(".")) {
          continue;
        }
        const from = folderOf(pkg, file);
        const to = folderOf(pkg, resolve(dirname(file), specifier));
        if (from === undefined || to === undefined) {
          wrong.push(`${rel(file)} imports ${specifier}, outside ${pkg.dir}/src/`);
          continue;
        }
        if (from === CONSOLE || to === CONSOLE) {
          if (from !== to) {
            wrong.push(`${rel(file)} imports ${specifier}: the console is a page of its own`);
          }
          continue;
        }
        const why = violation(pkg, from, to);
        if (why !== undefined) {
          wrong.push(`${rel(file)} imports ${specifier}: ${why}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });

  it(`the service imports nothing of the client but ${SHARED_ENTRY} and ${CONTRACT_ENTRY}/… (the console: the SDK's root entry)`, () => {
    const wrong = service
      .filter(({ file, specifier }) => {
        if (packageOf(specifier) !== CLIENT_NAME) {
          return false;
        }
        return folderOf(SERVICE, file) === CONSOLE
          ? specifier !== CLIENT_NAME
          : !isSharedEntry(specifier);
      })
      .map(({ file, specifier }) => `${rel(file)} imports ${specifier}`);
    assert.deepEqual(wrong, []);
  });

  it("the client imports nothing of the service, and only packages it declares", () => {
    const { dependencies = {}, peerDependencies = {} } = manifestOf(CLIENT);
    const declared = new Set([...Object.keys(dependencies), ...Object.keys(peerDependencies)]);
    const wrong = client
      .filter(({ specifier }) => {
        const name = packageOf(specifier);
        return name !== undefined && !declared.has(name);
      })
      .map(({ file, specifier }) => `${rel(file)} imports ${specifier}`);
    assert.deepEqual(wrong, []);
    for (const name of ["ioredis", "pino", "prom-client", "tsx", "sodium-native"]) {
      assert.equal(declared.has(name), false, `the client declares ${name}`);
    }
  });

  it("the client's shared protocol imports no package but @connectrpc/connect (its Code): the service loads it as it is", () => {
    const wrong = client
      .filter(({ file, specifier }) => {
        const name = packageOf(specifier);
        return (
          folderOf(CLIENT, file) === "protocol" &&
          name !== undefined &&
          name !== "@connectrpc/connect"
        );
      })
      .map(({ file, specifier }) => `${rel(file)} imports ${specifier}`);
    assert.deepEqual(wrong, []);
  });

  it("the service's run-time code imports only packages its manifest lists as run-time dependencies", () => {
    const { dependencies = {} } = manifestOf(SERVICE);
    const wrong = service
      .filter(({ file, specifier }) => {
        const name = packageOf(specifier);
        // The console is bundled at build time (dev dependencies are there).
        return name !== undefined && folderOf(SERVICE, file) !== CONSOLE && !(name in dependencies);
      })
      .map(({ file, specifier }) => `${rel(file)} imports ${specifier}`);
    assert.deepEqual(wrong, []);
  });

  it(`every import of a non-public Connect entry point sits in src/${CONNECT_INTERNALS_ROOM}/`, () => {
    const internal = service.filter(({ specifier }) => isConnectInternal(specifier));
    assert.ok(internal.length > 5, "finds the room's imports");
    const wrong = internal
      .filter(
        ({ file }) => !relative(srcOf(SERVICE), file).startsWith(`${CONNECT_INTERNALS_ROOM}${sep}`),
      )
      .map(({ file, specifier }) => `${rel(file)} imports ${specifier}`);
    assert.deepEqual(wrong, []);
    assert.equal(isConnectInternal("@connectrpc/connect/protocol-grpc"), true);
    assert.equal(isConnectInternal("@connectrpc/connect"), false);
    assert.equal(isConnectInternal("@connectrpc/connect-node"), false);
  });

  it("the layer rules say what they mean", () => {
    assert.equal(violation(CLIENT, "sdk", "cli"), "cli is a layer above sdk");
    assert.equal(violation(CLIENT, "sdk", "protocol"), undefined);
    assert.equal(violation(SERVICE, "store", "token"), "token is a layer above store");
    assert.equal(
      violation(SERVICE, "token", "redis"),
      "token reaches Redis only through the store",
    );
    assert.equal(violation(SERVICE, "server", "sdk"), "sdk is not a layer of server's package");
    assert.equal(packageOf("@perps/token-client/protocol"), CLIENT_NAME);
    assert.equal(isSharedEntry(`${CONTRACT_ENTRY}/perps/token/v1/token_pb.js`), true);
    assert.equal(isSharedEntry(`${CONTRACT_ENTRY}/../sdk/index.js`), false);
    assert.equal(isSharedEntry(`${CLIENT_NAME}/node`), false);
    assert.equal(packageOf("node:crypto"), undefined);
    assert.equal(packageOf("ioredis"), "ioredis");
  });

  it(`${WITHOUT_CONNECT.join(" and ")} build no ConnectError: they throw their own errors`, () => {
    const wrong = service
      .filter(({ file, specifier }) => {
        const folder = folderOf(SERVICE, file);
        return (
          folder !== undefined &&
          WITHOUT_CONNECT.includes(folder) &&
          specifier.startsWith("@connectrpc/")
        );
      })
      .map(({ file, specifier }) => `${rel(file)} imports ${specifier}`);
    assert.deepEqual(wrong, []);
  });
});
