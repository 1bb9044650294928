#!/usr/bin/env node
// Runs after `npm ci`/`npm install` (the "prepare" script: unlike "postinstall", npm
// runs it in this repository only, never where the package is installed as a
// dependency, which has no scripts/ folder and no business patching its connect).
//
// @connectrpc/connect answers a request message that is not valid protobuf
// with INTERNAL (HTTP 500), because its binary parse wraps the decode error in
// Code.Internal — before any interceptor can see it. Malformed input from a
// client is INVALID_ARGUMENT. There is no option or hook for this, so the one
// line is patched here, in the ESM and CJS builds; the patch is idempotent and
// fails loudly if the code ever changes, so an upgrade cannot silently drop it.
// test/unit/server/connect-parse-error.test.ts proves it is in place.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);
// The package exports no package.json; its entry lives in <root>/dist/.
const entry = require.resolve("@connectrpc/connect");
const root = entry.slice(0, entry.lastIndexOf("/dist/"));
const targets = [
  ["dist/esm/protocol/serialization.js", "Code.Internal", "Code.InvalidArgument"],
  [
    "dist/cjs/protocol/serialization.js",
    "code_js_1.Code.Internal",
    "code_js_1.Code.InvalidArgument",
  ],
];

for (const [file, from, to] of targets) {
  const path = join(root, file);
  const text = readFileSync(path, "utf8");
  const before = `ConnectError(\`parse binary: \${m}\`, ${from})`;
  const after = `ConnectError(\`parse binary: \${m}\`, ${to})`;
  if (text.includes(after)) {
    continue;
  }
  if (!text.includes(before)) {
    console.error(`patch-connect: ${path} has changed; review the parse-error patch`);
    process.exit(1);
  }
  writeFileSync(path, text.replace(before, after));
  console.log(`patch-connect: malformed request messages are INVALID_ARGUMENT in ${file}`);
}
