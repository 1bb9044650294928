import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  alertText,
  createToken,
  openPage,
  shot,
  signedIn,
  signIn,
} from "../support/console-page.js";
import { consoleSuite } from "../support/console-suite.js";

describe("token console when the service says no or is gone", () => {
  const { redis, service, browser, userId, key } = consoleSuite("limited.pem", {
    // Sign in, two creates, then the fourth signed call is one too many.
    tokenRateLimitPerMinute: 3,
  });

  it("shows the rate limit with its Retry-After, Redis down, and the service gone", async () => {
    const { context, page } = await openPage(browser, service);
    try {
      await signIn(page, userId, key.path);
      await signedIn(page);
      await createToken(page, "one");
      await page.getByRole("row", { name: /one/ }).waitFor();
      await createToken(page, "two");
      await page.getByRole("row", { name: /two/ }).waitFor();
      await createToken(page, "three");
      assert.match(
        await alertText(page, /too many/),
        /^Create failed: too many token requests for this user; retry later \(retry after \d+ s\)$/,
      );
      await shot(page, "15-error-rate-limit");

      await redis.stop();
      await page.getByRole("button", { name: "Revoke one" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Revoke", exact: true }).click();
      const down = await alertText(page, /unavailable/i);
      assert.match(down, /^Revoke one failed: Token store unavailable, try again$/);
      assert.doesNotMatch(
        down,
        /at \w+ \(|Error:|ECONNREFUSED|redis/i,
        "no stack trace, no internals",
      );
      await shot(page, "16-error-redis-down");

      await service.stop();
      await createToken(page, "four");
      const gone = await alertText(page, /cannot reach/);
      assert.match(
        gone,
        /^Create failed: cannot reach http:\/\/127\.0\.0\.1:\d+\/user\/tokens \(no answer: /,
      );
      await shot(page, "17-error-service-down");
    } finally {
      await context.close();
    }
  });
});
