import { after, before } from "node:test";
import { Redis } from "ioredis";
import { lateValue } from "./late-value.js";
import { startTestRedisServer, type TestRedis } from "./test-redis.js";

export interface RedisServerSuite {
  readonly server: TestRedis;
  /** A plain ioredis client of the server. */
  readonly redis: Redis;
}

/**
 * A private redis-server and a client of it, for the tests of the describe
 * block that calls this: started before its first test, stopped after its last.
 */
export function redisServerSuite(): RedisServerSuite {
  const [server, setServer] = lateValue<TestRedis>("server");
  const [redis, setRedis] = lateValue<Redis>("redis");
  before(async () => {
    setServer(await startTestRedisServer());
    setRedis(new Redis(server.url));
  });
  after(async () => {
    redis.disconnect();
    await server.dispose();
  });
  return { server, redis };
}
