import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { after, before } from "node:test";
import type { Browser } from "playwright-core";
import { dir, type KeyFile, opensslKey, putUserKey } from "./console-page.js";
import { lateValue } from "./late-value.js";
import { type ServiceSuiteOptions, serviceSuite } from "./service-suite.js";
import { launchBrowser } from "./test-browser.js";
import { startTestRedisServer } from "./test-redis.js";

/**
 * The service with its console, a browser, and a user whose key (made with
 * openssl into `keyName`) is registered; call it inside the suite's describe.
 */
export function consoleSuite(
  keyName: string,
  options: Pick<ServiceSuiteOptions, "tokenRateLimitPerMinute" | "lastUseFlushMs"> = {},
) {
  const [browser, setBrowser, browserStarted] = lateValue<Browser>("browser");
  const [key, setKey] = lateValue<KeyFile>("key");
  const userId = randomUUID();
  // Hooks run in the order they are registered: the browser closes before the service stops.
  before(async () => {
    setBrowser(await launchBrowser());
  });
  after(async () => {
    if (browserStarted()) {
      await browser.close();
    }
  });
  const { redis, service } = serviceSuite({
    startRedis: startTestRedisServer,
    console: true,
    ...options,
  });
  before(async () => {
    setKey(opensslKey(keyName));
    await putUserKey(service, userId, key.publicKeyHex);
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return { redis, service, browser, userId, key };
}
