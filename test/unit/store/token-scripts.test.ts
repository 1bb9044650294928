import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TOKEN_RECORD_LUA_CONSTANTS } from "../../../src/store/token-record.js";
import { CREATE_TOKEN, DELETE_TOKEN, TokenScriptStatus } from "../../../src/store/token-scripts.js";

/** The upper-case names a script uses outside strings and comments, and those it declares. */
function constantsOf(script: string): { used: Set<string>; declared: Set<string> } {
  const code = script.replace(/--[^\n]*/g, "").replace(/'[^'\n]*'|"[^"\n]*"/g, "''");
  const used = new Set(
    [...code.matchAll(/\b[A-Z][A-Z0-9_]+\b/g)]
      .map(([name]) => name)
      .filter((name) => !["KEYS", "ARGV", "KEY", "ARG"].includes(name)),
  );
  const declared = new Set(
    [...code.matchAll(/^local ([A-Z][A-Z0-9_]+) = /gm)].map(([, name]) => name),
  );
  return { used, declared };
}

describe("token scripts", () => {
  for (const [name, script] of [
    ["create", CREATE_TOKEN.lua],
    ["delete", DELETE_TOKEN.lua],
  ] as const) {
    it(`${name}: every status it answers is declared from TokenScriptStatus`, () => {
      const { used, declared } = constantsOf(script);
      assert.ok(used.size > 0);
      for (const constant of used) {
        assert.ok(declared.has(constant), `${constant} is not declared`);
        assert.ok(
          constant in TokenScriptStatus || constant in TOKEN_RECORD_LUA_CONSTANTS,
          `${constant} is neither a TokenScriptStatus nor of the record's layout`,
        );
      }
      // No status spelled as a bare number in a reply.
      assert.doesNotMatch(script, /return \{-?\d/);
    });
  }

  it("together they answer every status TokenScriptStatus names", () => {
    const used = new Set([
      ...constantsOf(CREATE_TOKEN.lua).used,
      ...constantsOf(DELETE_TOKEN.lua).used,
    ]);
    const statuses = [...used].filter((name) => name in TokenScriptStatus);
    assert.deepEqual(statuses.sort(), Object.keys(TokenScriptStatus).sort());
  });
});
