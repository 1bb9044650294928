import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";
import { openGrpcTransport } from "../src/sdk/grpc-transport.js";

const ROOT = resolve(import.meta.dirname, "../..");

describe("SDK browser path", () => {
  type Graph = { files: Set<string>; builtins: Map<string, string>; globals: string[] };

  // A bundler targeting browsers picks these export conditions.
  const CONDITIONS = new Set(["browser", "import", "module", "default"]);

  function exportTarget(entry: unknown): string | undefined {
    if (typeof entry === "string") {
      return entry;
    }
    if (typeof entry === "object" && entry !== null) {
      for (const [condition, target] of Object.entries(entry)) {
        const found = CONDITIONS.has(condition) ? exportTarget(target) : undefined;
        if (found !== undefined) {
          return found;
        }
      }
    }
    return undefined;
  }

  function resolvePackage(specifier: string, from: string): string {
    const parts = specifier.split("/");
    const nameLength = specifier.startsWith("@") ? 2 : 1;
    const name = parts.slice(0, nameLength).join("/");
    const subpath = ["."].concat(parts.slice(nameLength)).join("/");
    for (let dir = dirname(from); ; dir = dirname(dir)) {
      const pkgDir = join(dir, "node_modules", name);
      if (existsSync(join(pkgDir, "package.json"))) {
        const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as {
          exports?: Record<string, unknown>;
          module?: string;
          main?: string;
        };
        const target =
          pkg.exports === undefined
            ? subpath === "."
              ? (pkg.module ?? pkg.main ?? "index.js")
              : subpath
            : exportTarget(pkg.exports[subpath]);
        assert.ok(target !== undefined, `${specifier}: no export for ${subpath}`);
        return join(pkgDir, target);
      }
      assert.notEqual(dir, dirname(dir), `${specifier} not found from ${from}`);
    }
  }

  function resolveSpecifier(specifier: string, from: string): string {
    if (!specifier.startsWith(".")) {
      return resolvePackage(specifier, from);
    }
    const path = resolve(dirname(from), specifier);
    if (existsSync(path) && statSync(path).isFile()) {
      return path;
    }
    // Our sources import "./x.js" for "./x.ts" (NodeNext).
    const tsPath = path.replace(/\.js$/, ".ts");
    assert.ok(existsSync(tsPath), `cannot resolve ${specifier} from ${from}`);
    return tsPath;
  }

  /**
   * What a bundler would pull in: static imports and re-exports that are not
   * type-only, and dynamic imports of a literal specifier.
   */
  function importsOf(file: string): { specifiers: string[]; globals: string[] } {
    const kind = file.endsWith(".ts") ? ts.ScriptKind.TS : ts.ScriptKind.JS;
    const source = ts.createSourceFile(
      file,
      readFileSync(file, "utf8"),
      ts.ScriptTarget.Latest,
      true,
      kind,
    );
    const specifiers: string[] = [];
    const globals: string[] = [];
    const visit = (node: ts.Node): void => {
      if (
        ts.isImportDeclaration(node) &&
        node.importClause?.isTypeOnly !== true &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        specifiers.push(node.moduleSpecifier.text);
      } else if (
        ts.isExportDeclaration(node) &&
        !node.isTypeOnly &&
        node.moduleSpecifier !== undefined &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        specifiers.push(node.moduleSpecifier.text);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] !== undefined &&
        ts.isStringLiteralLike(node.arguments[0])
      ) {
        specifiers.push(node.arguments[0].text);
      } else if (
        ts.isIdentifier(node) &&
        (node.text === "Buffer" || node.text === "process") &&
        !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node) &&
        !(ts.isPropertySignature(node.parent) && node.parent.name === node)
      ) {
        globals.push(`${node.text} in ${file}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return { specifiers, globals };
  }

  function importGraph(entry: string): Graph {
    const graph: Graph = { files: new Set(), builtins: new Map(), globals: [] };
    const queue = [entry];
    for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
      if (graph.files.has(file)) {
        continue;
      }
      graph.files.add(file);
      const { specifiers, globals } = importsOf(file);
      if (file.startsWith(join(ROOT, "client/src"))) {
        graph.globals.push(...globals);
      }
      for (const specifier of specifiers) {
        if (isBuiltin(specifier)) {
          graph.builtins.set(specifier, file);
        } else {
          queue.push(resolveSpecifier(specifier, file));
        }
      }
    }
    return graph;
  }

  it("no module reachable from the SDK entry imports a Node.js built-in", () => {
    const graph = importGraph(join(ROOT, "client/src/sdk/index.ts"));
    assert.deepEqual(Object.fromEntries(graph.builtins), {});
    assert.deepEqual(graph.globals, [], "Node globals used on the browser path");
    const files = [...graph.files].map((f) => f.slice(ROOT.length + 1));
    // The walk did reach what the SDK is made of, node_modules included...
    for (const expected of [
      "client/src/protocol/signed-message.ts",
      "client/src/gen/perps/token/v1/token_pb.ts",
      "node_modules/@connectrpc/connect-web/dist/esm/index.js",
      "node_modules/@noble/ed25519/index.js",
    ]) {
      assert.ok(files.includes(expected), `${expected} not on the graph`);
    }
    // ...but not connect-node, which only the gRPC transport loads, lazily.
    assert.deepEqual(
      files.filter((f) => f.includes("connect-node")),
      [],
    );
  });

  it("the walk does see Node built-ins: the Node entry reaches node:crypto and node:zlib", () => {
    const graph = importGraph(join(ROOT, "client/src/sdk/node.ts"));
    assert.ok(graph.builtins.has("node:crypto"));
    assert.ok(graph.builtins.has("node:zlib"));
  });

  it('transport "grpc" outside Node.js fails with a clear error', async () => {
    const node = Object.getOwnPropertyDescriptor(process.versions, "node");
    assert.ok(node !== undefined);
    // What a browser looks like to the check: no process.versions.node. Only
    // the synchronous start of the call runs without it.
    Object.defineProperty(process.versions, "node", { ...node, value: undefined });
    let opening: Promise<unknown>;
    try {
      opening = openGrpcTransport("http://127.0.0.1:1");
    } finally {
      Object.defineProperty(process.versions, "node", node);
    }
    await assert.rejects(opening, /transport "grpc" needs HTTP\/2 and works in Node\.js only/);
  });

  it("the package exports the browser entry as '.' and the Node one as './node'", () => {
    type Target = { types: string; default: string };
    const pkg = JSON.parse(readFileSync(join(ROOT, "client/package.json"), "utf8")) as {
      exports: Record<string, { import: Target; require: Target }>;
    };
    for (const [subpath, module] of [
      [".", "index"],
      ["./node", "node"],
    ] as const) {
      // What client/test/package.test.ts installs and runs: the build of these sources.
      assert.deepEqual(pkg.exports[subpath], {
        import: { types: `./dist/sdk/${module}.d.ts`, default: `./dist/sdk/${module}.js` },
        require: {
          types: `./dist/cjs/sdk/${module}.d.ts`,
          default: `./dist/cjs/sdk/${module}.js`,
        },
      });
    }
  });
});
