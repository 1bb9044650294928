import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { redisKeysOf } from "../../src/store/keys.js";
import { bearer, createToken, deleteToken, register } from "../support/forward-auth-calls.js";
import { serviceSuite } from "../support/service-suite.js";
import { newUser } from "../support/signing.js";

// ListTokens' lastUsedAt (issue 42): absent until a token's first use, then
// the minute of its latest, written off the check's path. The service here
// writes every 200 ms instead of every 10 s, so that the test need not wait.

const MINUTE = 60_000;

describe("a token's last use", () => {
  const { service } = serviceSuite({ lastUseFlushMs: 200 });

  async function listed(token: string): Promise<Map<unknown, Record<string, unknown>>> {
    const res = await fetch(`${service.publicUrl}/user/tokens`, {
      headers: { authorization: bearer(token) },
    });
    const body = (await res.json()) as { tokens: Record<string, unknown>[] };
    assert.equal(res.status, 200, JSON.stringify(body));
    return new Map(body.tokens.map((t) => [t.name, t]));
  }

  it("is absent until the first use, then the minute of the latest, on every check path", async () => {
    const user = await newUser();
    await register(service, user);
    const lister = await createToken(service.publicUrl, user, { name: "lister" });
    const checked = await createToken(service.publicUrl, user, { name: "checked" });
    const authed = await createToken(service.publicUrl, user, { name: "authed" });
    await createToken(service.publicUrl, user, { name: "idle" });
    const before = (await listed(lister.token)).get("checked");
    assert.ok(before !== undefined);
    assert.equal(before.lastUsedAt, undefined, "not used yet");

    const introspect = createClient(
      TokenIntrospectionService,
      createGrpcTransport({ baseUrl: service.internalUrl }),
    );
    // The first check reads Redis (the pipeline), the next ones the cache (the check lane).
    for (let i = 0; i < 3; i++) {
      assert.equal((await introspect.introspectToken({ token: checked.token })).active, true);
      const auth = await fetch(`${service.internalUrl}/auth`, {
        headers: { authorization: bearer(authed.token) },
      });
      assert.equal(auth.status, 200);
    }
    const from = Math.floor(Date.now() / MINUTE) * MINUTE;
    await sleep(600);
    const after = await listed(lister.token);
    for (const name of ["lister", "checked", "authed"]) {
      const at = String(after.get(name)?.lastUsedAt);
      assert.match(at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/, name);
      assert.ok(Date.parse(at) >= from - MINUTE && Date.parse(at) <= Date.now(), `${name}: ${at}`);
    }
    assert.equal(after.get("idle")?.lastUsedAt, undefined, "a token not used has none");
    // The last use expires with its token (PXAT of the token's key), and a deleted
    // token's is never written again: what a check noted before the delete goes nowhere.
    const key = redisKeysOf(user.userId).lastUse(checked.id);
    const tokenKey = redisKeysOf(user.userId).token(checked.id);
    assert.equal(await service.redis.pexpiretime(key), await service.redis.pexpiretime(tokenKey));
    assert.equal((await introspect.introspectToken({ token: checked.token })).active, true);
    await deleteToken(service.publicUrl, user, checked.id);
    const written = await service.redis.get(key);
    await sleep(600);
    assert.equal(await service.redis.get(key), written);
    assert.equal(await service.redis.exists(tokenKey), 0);
  });
});
