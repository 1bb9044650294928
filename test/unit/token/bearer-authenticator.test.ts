import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { generateToken, tokenIdOf } from "@perps/token-client/protocol";
import { redisKeysOf } from "../../../src/store/keys.js";
import { createRedisRunner } from "../../../src/store/redis-runner.js";
import { DEFAULT_GRANTS } from "../../../src/store/token-grants.js";
import { createTokenStore } from "../../../src/store/token-store.js";
import { createBearerAuthenticator } from "../../../src/token/bearer-authenticator.js";
import { redisServerSuite } from "../../support/redis-server-suite.js";
import { STORE_SETTINGS } from "../../support/store-settings.js";
import { storedToken } from "../../support/stored-token.js";

const SIGNER_PUBLIC_KEY = "cd".repeat(32);

// The authenticator over the real store and a private redis-server.
describe("bearer authenticator", () => {
  const { redis } = redisServerSuite();

  /** A stored token of a new user, named `name`, expiring at `expiresAtMs`. */
  async function stored(name: string | undefined, expiresAtMs: number) {
    const userId = randomUUID();
    await redis.sadd(redisKeysOf(userId).publicKeys, SIGNER_PUBLIC_KEY);
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const { token, tokenId } = await storedToken(store, {
      userId,
      signerPublicKey: SIGNER_PUBLIC_KEY,
      name,
      expiresAtMs,
    });
    return { userId, tokenId, token, store };
  }

  it("a live token is its user, id, name and expiry; nothing else is", async () => {
    const expiresAtMs = Date.now() + 60_000;
    const { userId, tokenId, token, store } = await stored("ci", expiresAtMs);
    const bearer = createBearerAuthenticator({ store });
    assert.deepEqual(await bearer.authenticate(token), {
      userId,
      tokenId,
      name: "ci",
      expiresAtMs,
      grants: DEFAULT_GRANTS,
    });
    // Same user and id, another secret: the record is found, the digest differs.
    assert.equal(await bearer.authenticate(generateToken(userId, tokenId)), undefined);
    assert.equal(
      await bearer.authenticate(generateToken(userId, tokenIdOf(randomBytes(32)))),
      undefined,
    );
  });

  it('a session token has the name ""', async () => {
    const { token, store } = await stored(undefined, Date.now() + 60_000);
    const identity = await createBearerAuthenticator({ store }).authenticate(token);
    assert.equal(identity?.name, "");
  });

  it("a token whose expiry has passed by the service's clock is inactive, even if Redis still has it", async () => {
    const expiresAtMs = Date.now() + 60_000;
    const { token, store } = await stored("edge", expiresAtMs);
    const at = (ms: number) => createBearerAuthenticator({ store, now: () => ms });
    assert.notEqual(await at(expiresAtMs - 1).authenticate(token), undefined);
    assert.equal(await at(expiresAtMs).authenticate(token), undefined);
    assert.equal(await at(expiresAtMs + 1).authenticate(token), undefined);
  });

  it("a malformed token is refused without a Redis call", async () => {
    const { token } = await stored(undefined, Date.now() + 60_000);
    const operations: string[] = [];
    const store = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis },
      runRedis: createRedisRunner({ observe: (operation) => operations.push(operation) }),
    });
    const bearer = createBearerAuthenticator({ store });
    for (const bad of [
      "",
      "pt_",
      token.slice(0, -1),
      `${token}x`,
      `x${token.slice(1)}`,
      "a".repeat(1 << 20),
    ]) {
      assert.equal(await bearer.authenticate(bad), undefined);
    }
    assert.deepEqual(operations, []);
    assert.notEqual(await bearer.authenticate(token), undefined);
    assert.deepEqual(operations, ["token.lookup"]);
  });
});
