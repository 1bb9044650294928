import { readFileSync } from "node:fs";

/**
 * The text of the script `lua/<file>` next to this module, read once at
 * start-up. A compiled build must copy the `.lua` files along with the JS.
 */
export function readLuaScript(file: string): string {
  return readFileSync(new URL(`./lua/${file}`, import.meta.url), "utf8");
}

/**
 * `local NAME = value` for each entry: put before a script, it lets the Lua
 * use the names of numbers that TypeScript decodes from the same table.
 */
export function luaConstants(constants: Readonly<Record<string, number>>): string {
  return Object.entries(constants)
    .map(([name, value]) => `local ${name} = ${value}`)
    .join("\n");
}
