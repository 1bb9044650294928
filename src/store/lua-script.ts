/**
 * The store's Lua scripts as TypeScript sees them: each declared once, its
 * KEYS and ARGV by name (`luaScript`), its text read from lua/ next to this
 * module at start-up; then defined as an ioredis command on each client the
 * store uses (`scriptedClient`).
 */

import { readFileSync } from "node:fs";
import type { RedisClient } from "../redis/redis-client.js";
import type { RedisHolder } from "../redis/redis-holder.js";

/** Keys are text; digests and records go to the scripts as raw bytes. */
export type ScriptArg = string | Buffer;

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

/**
 * A Lua script with its KEYS and ARGV declared once, by name and in order:
 * the script reads them as `KEY.<name>` and `ARG.<name>` (a prelude made
 * from the declaration binds them to `KEYS[i]` and `ARGV[i]`), and the
 * caller passes them by name (`argv`), so neither side knows a position.
 * test/unit/store/lua-script.test.ts checks that a script reads no
 * position itself and every name it reads, and only those, is declared.
 */
export interface LuaScript<K extends string, A extends string> {
  /** The ioredis command it is defined as. */
  readonly command: string;
  readonly keys: readonly K[];
  readonly args: readonly A[];
  /** The script's own text (its files and constants), without the prelude. */
  readonly source: string;
  /** The text Redis runs: the prelude, then `source`. */
  readonly lua: string;
  /** KEYS then ARGV, in the declared order. */
  argv(keys: Readonly<Record<K, string>>, args: Readonly<Record<A, ScriptArg>>): ScriptArg[];
}

export interface LuaScriptOptions<K extends string, A extends string> {
  command: string;
  keys: readonly K[];
  args: readonly A[];
  /** Files of lua/, in order (a shared part first). */
  files: readonly string[];
  /** Named numbers put before the files (`luaConstants`). */
  constants?: Readonly<Record<string, number>>;
}

const LUA_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Declares a script (see {@link LuaScript}). */
export function luaScript<const K extends string, const A extends string = never>(
  opts: LuaScriptOptions<K, A>,
): LuaScript<K, A> {
  for (const name of [...opts.keys, ...opts.args]) {
    if (!LUA_NAME.test(name)) {
      throw new Error(`${opts.command}: "${name}" is not a Lua name`);
    }
  }
  const table = (local: string, names: readonly string[], source: string) =>
    `local ${local} = {${names.map((name, i) => `${name} = ${source}[${i + 1}]`).join(", ")}}`;
  const source = [
    ...(opts.constants === undefined ? [] : [luaConstants(opts.constants)]),
    ...opts.files.map(readLuaScript),
  ].join("\n");
  const prelude = [table("KEY", opts.keys, "KEYS"), table("ARG", opts.args, "ARGV")].join("\n");
  return {
    command: opts.command,
    keys: opts.keys,
    args: opts.args,
    source,
    lua: `${prelude}\n${source}`,
    argv: (keys, args) => [...opts.keys.map((k) => keys[k]), ...opts.args.map((a) => args[a])],
  };
}

// The scripts as commands on the store's clients.

/** What defining a script as an ioredis command needs. */
interface ScriptCommand {
  readonly command: string;
  readonly keys: readonly string[];
  readonly lua: string;
}

/**
 * The holder's current client with the scripts defined on it as commands.
 * A holder may replace its client (redis-holder.ts), so each client gets the
 * definitions the first time it is seen here, not once at start.
 */
export function scriptedClient(
  holder: RedisHolder,
  scripts: readonly ScriptCommand[],
): () => RedisClient {
  const defined = new WeakSet<RedisClient>();
  return () => {
    const client = holder.client;
    if (!defined.has(client)) {
      for (const script of scripts) {
        client.defineCommand(script.command, {
          numberOfKeys: script.keys.length,
          lua: script.lua,
        });
      }
      defined.add(client);
    }
    return client;
  };
}
