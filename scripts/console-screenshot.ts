// Makes docs/console.png anew from the console as it is (`npm run docs:console`):
// a private redis-server and service, a user whose openssl key is registered,
// two named tokens created through the page, the page shot at 1000 px wide.
// Needs what the console tests need: redis-server, openssl and Debian's chromium.

import { rmSync } from "node:fs";
import { join } from "node:path";
import {
  createToken,
  dir,
  openPage,
  opensslKey,
  putUserKey,
  ROOT,
  signedIn,
  signIn,
} from "../test/support/console-page.js";
import { launchBrowser } from "../test/support/test-browser.js";
import { startTestRedisServer } from "../test/support/test-redis.js";
import { startTestService } from "../test/support/test-service.js";

// A fixed id, so that a shot made again differs only where the page does.
const USER_ID = "f2c7e72a-345f-4d59-ab42-bd274812277b";
const OUT = join(ROOT, "docs/console.png");

const redis = await startTestRedisServer();
const service = await startTestService({ redisUrl: redis.url, console: true });
const browser = await launchBrowser();
try {
  const key = opensslKey("docs.pem");
  await putUserKey(service, USER_ID, key.publicKeyHex);
  const { page } = await openPage(browser, service);
  await signIn(page, USER_ID, key.path);
  await signedIn(page);
  for (const [name, days] of [
    ["ci-bot", 28],
    ["deploy", 5],
  ] as const) {
    await createToken(page, name, days);
    await page.getByRole("cell", { name, exact: true }).waitFor();
  }
  await page.screenshot({ path: OUT, fullPage: true });
  console.log(`wrote ${OUT}`);
} finally {
  await browser.close();
  await service.stop();
  await redis.dispose();
  rmSync(dir, { recursive: true, force: true });
}
