import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { luaConstants, luaScript } from "../../../src/store/lua-script.js";
import { PUBLIC_KEY_SCRIPTS } from "../../../src/store/public-key-store.js";
import { TOKEN_SCRIPTS } from "../../../src/store/token-scripts.js";

/** The Lua without comments and string literals. */
function code(lua: string): string {
  return lua.replace(/--[^\n]*/g, "").replace(/'[^'\n]*'|"[^"\n]*"/g, "''");
}

/** The names a script reads from a table (`KEY.name`). */
function namesRead(lua: string, table: "KEY" | "ARG"): Set<string> {
  return new Set(
    [...code(lua).matchAll(new RegExp(`\\b${table}\\.(\\w+)`, "g"))].map(([, n]) => n ?? ""),
  );
}

// Each script's KEYS and ARGV are declared once (token-scripts.ts,
// public-key-store.ts); the script reads them by name and the store passes
// them by name, so no position is known on either side.
describe("Lua script contracts", () => {
  for (const script of [...TOKEN_SCRIPTS, ...PUBLIC_KEY_SCRIPTS]) {
    it(`${script.command}: reads no position, and exactly the names it declares`, () => {
      assert.doesNotMatch(code(script.source), /\b(KEYS|ARGV)\s*\[/);
      assert.deepEqual([...namesRead(script.source, "KEY")].sort(), [...script.keys].sort());
      assert.deepEqual([...namesRead(script.source, "ARG")].sort(), [...script.args].sort());
    });
  }

  it("the prelude binds each name to its position, and a call passes values in that order", () => {
    const script = luaScript({
      command: "test",
      keys: ["first", "second"],
      args: ["one", "two", "three"],
      files: ["lookup-token.lua"],
    });
    assert.match(script.lua, /^local KEY = \{first = KEYS\[1\], second = KEYS\[2\]\}\n/);
    assert.match(
      script.lua,
      /\nlocal ARG = \{one = ARGV\[1\], two = ARGV\[2\], three = ARGV\[3\]\}\n/,
    );
    const digest = Buffer.of(1, 2);
    assert.deepEqual(
      script.argv({ second: "k2", first: "k1" }, { three: "3", one: digest, two: "2" }),
      ["k1", "k2", digest, "2", "3"],
    );
  });

  it("names its numbers before the files, one local each, so that Lua and TypeScript share them", () => {
    assert.equal(luaConstants({ DONE: 1, REPLAYED: -2 }), "local DONE = 1\nlocal REPLAYED = -2");
    const script = luaScript({
      command: "test",
      keys: ["token"],
      args: [],
      files: ["lookup-token.lua"],
      constants: { DONE: 1 },
    });
    assert.match(script.source, /^local DONE = 1\n/);
  });

  it("refuses a name Lua cannot read as a field", () => {
    assert.throws(
      () => luaScript({ command: "bad", keys: ["user-keys"], args: [], files: [] }),
      /not a Lua name/,
    );
  });
});
