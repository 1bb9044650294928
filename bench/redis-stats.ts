import type { Redis } from "ioredis";

/** Calls per command name, from INFO commandstats. */
export type CommandCalls = Record<string, number>;

// Commands the token scripts run inside Redis. Redis counts them in
// commandstats too, but they cost no round trip (the service never sends any
// of them on its own, SET and GET included).
const SCRIPT_INTERNAL = new Set([
  "set",
  "get",
  "exists",
  "pexpiretime",
  "sismember",
  "time",
  "zremrangebyscore",
  "zscore",
  "hmget",
  "hset",
  "pexpire",
  "pexpireat",
  "zadd",
  "zrange",
  "zcard",
  "zrem",
  "del",
]);
// Commands of the benchmark itself.
const OWN = new Set(["info"]);

export async function commandCalls(redis: Redis): Promise<CommandCalls> {
  const info = await redis.info("commandstats");
  const calls: CommandCalls = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const [, name, count] = match;
    if (name !== undefined && count !== undefined) {
      calls[name] = Number(count);
    }
  }
  return calls;
}

/**
 * Round trips per request: client-issued commands between two snapshots, per
 * request. `clientIssued` names commands that the server measured sends
 * itself although the token scripts run them too (the check floor's GET).
 */
export function roundTripsPerRequest(
  before: CommandCalls,
  after: CommandCalls,
  requests: number,
  clientIssued: ReadonlySet<string> = new Set(),
): { perRequest: number; commands: CommandCalls } {
  const commands: CommandCalls = {};
  let clientCommands = 0;
  for (const [name, count] of Object.entries(after)) {
    const delta = count - (before[name] ?? 0);
    if (delta === 0 || OWN.has(name)) {
      continue;
    }
    commands[name] = delta;
    if (clientIssued.has(name) || !SCRIPT_INTERNAL.has(name)) {
      clientCommands += delta;
    }
  }
  return {
    perRequest: requests === 0 ? 0 : Math.round((clientCommands / requests) * 100) / 100,
    commands,
  };
}

/** CPU time the Redis server has used so far (user + system), in seconds, from INFO cpu. */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const field = (name: string) =>
    Number(new RegExp(`^${name}:([0-9.]+)`, "m").exec(info)?.[1] ?? 0);
  return field("used_cpu_sys") + field("used_cpu_user");
}
