import { Cluster } from "ioredis";
import type { RedisClient } from "../../src/redis/redis-client.js";

/** Every key matching `pattern`, on one server or on every primary of a cluster. */
export async function allKeys(redis: RedisClient, pattern: string): Promise<string[]> {
  const servers = redis instanceof Cluster ? redis.nodes("master") : [redis];
  const keys = await Promise.all(servers.map((server) => server.keys(pattern)));
  return keys.flat();
}
