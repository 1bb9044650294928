import type { RedisClient } from "../redis/redis-client.js";
import type { RedisHolder } from "../redis/redis-holder.js";

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
