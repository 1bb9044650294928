import { after, before } from "node:test";
import { lateValue } from "./late-value.js";
import { startTestRedis, type TestRedis } from "./test-redis.js";
import { startTestService, type TestService, type TestServiceOptions } from "./test-service.js";

export interface ServiceSuite {
  readonly redis: TestRedis;
  readonly service: TestService;
}

export interface ServiceSuiteOptions extends Omit<TestServiceOptions, "redis" | "redisUrl"> {
  /** How to start the private Redis. Default startTestRedis (a cluster under TEST_REDIS=cluster). */
  startRedis?: () => Promise<TestRedis>;
}

/**
 * A private Redis and the whole service on it, for the tests of the describe
 * block that calls this: started before its first test, stopped after its last.
 */
export function serviceSuite(options: ServiceSuiteOptions = {}): ServiceSuite {
  const { startRedis = startTestRedis, ...serviceOptions } = options;
  const [redis, setRedis, redisStarted] = lateValue<TestRedis>("redis");
  const [service, setService, serviceStarted] = lateValue<TestService>("service");
  before(async () => {
    setRedis(await startRedis());
    setService(await startTestService({ ...serviceOptions, redis: redis.topology }));
  });
  after(async () => {
    if (serviceStarted()) {
      await service.stop();
    }
    if (redisStarted()) {
      await redis.dispose();
    }
  });
  return { redis, service };
}
