import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CREATE_TOKEN,
  DELETE_TOKEN,
  LIST_NAMED_TOKENS,
  TokenScriptStatus,
} from "../../../src/store/token-scripts.js";

/** The statuses a script answers: the names its own code uses (not the constants put before it). */
function statusesOf(source: string): string[] {
  const code = source
    .replace(/^local [A-Z][A-Z0-9_]* = -?\d+$/gm, "")
    .replace(/--[^\n]*/g, "")
    .replace(/'[^'\n]*'|"[^"\n]*"/g, "''");
  return Object.keys(TokenScriptStatus).filter((name) => new RegExp(`\\b${name}\\b`).test(code));
}

describe("TokenScriptStatus", () => {
  it("is whole numbers: Redis truncates a Lua number in a reply to an integer", () => {
    for (const [name, value] of Object.entries(TokenScriptStatus)) {
      assert.ok(Number.isInteger(value), `${name} = ${value}`);
    }
  });

  for (const script of [CREATE_TOKEN, DELETE_TOKEN, LIST_NAMED_TOKENS]) {
    it(`${script.command}: the statuses it answers are told apart by their numbers`, () => {
      const answered = statusesOf(script.source);
      assert.ok(answered.includes("DONE"), answered.join(" "));
      const numbers = answered.map(
        (name) => TokenScriptStatus[name as keyof typeof TokenScriptStatus],
      );
      assert.equal(new Set(numbers).size, numbers.length, answered.join(" "));
    });
  }
});
