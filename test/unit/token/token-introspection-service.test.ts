import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { createHandlerContext } from "@connectrpc/connect";
import {
  IntrospectTokenRequestSchema,
  IntrospectTokenResponseSchema,
  TokenIntrospectionService,
} from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { DEFAULT_GRANTS, tokenGrants } from "../../../src/store/token-grants.js";
import type {
  BearerAuthenticator,
  BearerIdentity,
} from "../../../src/token/bearer-authenticator.js";
import {
  createTokenIntrospectionService,
  introspectionAnswer,
} from "../../../src/token/token-introspection-service.js";

const identity: BearerIdentity = {
  userId: "0b6d5c8e-6a53-4d5e-9c3b-1f2a3b4c5d6e",
  tokenId: "YAnc9iX83Ws3U0fLFuOMmw",
  name: "ci",
  // 2026-11-21T23:59:59.999Z: the last millisecond of the day.
  expiresAtMs: Date.UTC(2026, 10, 21, 23, 59, 59, 999),
  grants: DEFAULT_GRANTS,
};

/** The identities the service said were used. */
const used: BearerIdentity[] = [];

/** An authenticator that knows one token, "live", as `identity`. */
const authenticator: BearerAuthenticator = {
  authenticate: async (token) => (token === "live" ? identity : undefined),
  used: (who) => used.push(who),
};

const context = () =>
  createHandlerContext({
    service: TokenIntrospectionService,
    method: TokenIntrospectionService.method.introspectToken,
    protocolName: "grpc",
    requestMethod: "POST",
    url: "http://localhost/perps.token.v1.TokenIntrospectionService/IntrospectToken",
  });

describe("introspectionAnswer", () => {
  it("gives a live token's user, id, name, expiry as date and milliseconds, and scopes", () => {
    assert.deepEqual(
      introspectionAnswer(identity),
      create(IntrospectTokenResponseSchema, {
        active: true,
        userId: identity.userId,
        tokenId: identity.tokenId,
        name: "ci",
        expiresAt: "2026-11-21",
        expiresAtMs: BigInt(identity.expiresAtMs),
        scopes: ["read", "trade"],
      }),
    );
  });

  it('gives a session token the name ""', () => {
    assert.equal(introspectionAnswer({ ...identity, name: "" }).name, "");
  });

  it("answers no identity with active: false and nothing more", () => {
    assert.deepEqual(
      introspectionAnswer(undefined),
      create(IntrospectTokenResponseSchema, { active: false }),
    );
  });
});

describe("createTokenIntrospectionService", () => {
  it("answers what the authenticator says of the token, and tells observe", async () => {
    const seen: boolean[] = [];
    const service = createTokenIntrospectionService({
      authenticator,
      observe: (active) => seen.push(active),
    });
    const ask = (token: string) =>
      service.introspectToken(create(IntrospectTokenRequestSchema, { token }), context());
    assert.deepEqual(await ask("live"), introspectionAnswer(identity));
    assert.deepEqual(await ask("other"), create(IntrospectTokenResponseSchema, { active: false }));
    assert.deepEqual(await ask(""), create(IntrospectTokenResponseSchema, { active: false }));
    assert.deepEqual(seen, [true, false, false]);
    assert.deepEqual(used.splice(0), [identity]);
  });

  it("a token bound to addresses is active only for a clientIp inside them", async () => {
    const bound = { ...identity, grants: tokenGrants(["read"], ["203.0.113.0/24"]) };
    const uses: BearerIdentity[] = [];
    const service = createTokenIntrospectionService({
      authenticator: { authenticate: async () => bound, used: (who) => uses.push(who) },
    });
    const ask = (clientIp: string) =>
      service.introspectToken(
        create(IntrospectTokenRequestSchema, { token: "live", clientIp }),
        context(),
      );
    assert.deepEqual(await ask("203.0.113.9"), introspectionAnswer(bound));
    assert.deepEqual((await ask("203.0.113.9")).scopes, ["read"]);
    for (const outside of ["198.51.100.1", "", "not an address"]) {
      assert.deepEqual(
        await ask(outside),
        create(IntrospectTokenResponseSchema, { active: false }),
      );
    }
    // Only the answers that let the token through are its uses.
    assert.equal(uses.length, 2);
  });

  it("fails the call when the authenticator cannot answer, telling observe nothing", async () => {
    const seen: boolean[] = [];
    const down = new Error("Redis unavailable");
    const service = createTokenIntrospectionService({
      authenticator: { authenticate: () => Promise.reject(down), used: () => undefined },
      observe: (active) => seen.push(active),
    });
    await assert.rejects(
      async () =>
        service.introspectToken(create(IntrospectTokenRequestSchema, { token: "live" }), context()),
      (e) => e === down,
    );
    assert.deepEqual(seen, []);
  });

  it("needs no observer", async () => {
    const service = createTokenIntrospectionService({ authenticator });
    const answer = await service.introspectToken(
      create(IntrospectTokenRequestSchema, { token: "live" }),
      context(),
    );
    assert.equal(answer.active, true);
  });
});
