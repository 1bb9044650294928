import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import {
  RevokeUserTokensRequestSchema,
  TokenAdminService,
} from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import type { AuditEvent } from "../../../src/log/audit-event.js";
import { createTokenStore } from "../../../src/store/token-store.js";
import { createTokenAdminService } from "../../../src/token/token-admin-service.js";
import { redisServerSuite } from "../../support/redis-server-suite.js";
import { STORE_SETTINGS } from "../../support/store-settings.js";
import { storeUser } from "../../support/stored-tokens.js";

const context = () =>
  createHandlerContext({
    service: TokenAdminService,
    method: TokenAdminService.method.revokeUserTokens,
    protocolName: "grpc",
    requestMethod: "POST",
    url: "http://localhost/perps.token.v1.TokenAdminService/RevokeUserTokens",
  });

// The service over the real store and a private redis-server.
describe("createTokenAdminService: RevokeUserTokens", () => {
  const { redis } = redisServerSuite();

  it("revokes every live token of the user, named and session, answers how many, and audits it", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const tokenOf = await storeUser(redis);
    const expiresAtMs = Date.now() + 60_000;
    const tokens = [
      tokenOf("ci", expiresAtMs),
      tokenOf("bot", expiresAtMs),
      tokenOf(undefined, expiresAtMs),
    ];
    for (const token of tokens) {
      assert.deepEqual(await store.create(token), { kind: "created" });
    }
    const other = (await storeUser(redis))("ci", expiresAtMs);
    assert.deepEqual(await store.create(other), { kind: "created" });

    const audited: [AuditEvent, HandlerContext][] = [];
    const service = createTokenAdminService({ store, audit: (e, c) => audited.push([e, c]) });
    const userId = tokens[0]?.userId ?? "";
    const ctx = context();
    // Identity is case-insensitive: the upper-case id is the same user.
    const answer = await service.revokeUserTokens(
      create(RevokeUserTokensRequestSchema, { userId: userId.toUpperCase() }),
      ctx,
    );
    assert.equal(answer.revokedTokens, 3);
    assert.deepEqual(audited, [[{ audit: "RevokeUserTokens", userId, revokedTokens: 3 }, ctx]]);
    for (const token of tokens) {
      assert.equal(await store.lookup(userId, token.tokenId), undefined);
    }
    assert.notEqual(await store.lookup(other.userId, other.tokenId), undefined);

    const again = await service.revokeUserTokens(
      create(RevokeUserTokensRequestSchema, { userId }),
      context(),
    );
    assert.equal(again.revokedTokens, 0);
    assert.deepEqual(
      audited.map(([e]) => e),
      [
        { audit: "RevokeUserTokens", userId, revokedTokens: 3 },
        { audit: "RevokeUserTokens", userId, revokedTokens: 0 },
      ],
    );
  });

  it("works without an audit log", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const tokenOf = await storeUser(redis);
    const token = tokenOf("ci", Date.now() + 60_000);
    assert.deepEqual(await store.create(token), { kind: "created" });
    const answer = await createTokenAdminService({ store }).revokeUserTokens(
      create(RevokeUserTokensRequestSchema, { userId: token.userId }),
      context(),
    );
    assert.equal(answer.revokedTokens, 1);
  });
});
