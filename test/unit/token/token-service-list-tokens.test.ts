import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, type ConnectError, createHandlerContext } from "@connectrpc/connect";
import {
  ListTokensRequestSchema,
  TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { redisKeysOf } from "../../../src/store/keys.js";
import { createTokenStore, type TokenStore } from "../../../src/store/token-store.js";
import { createBearerAuthenticator } from "../../../src/token/bearer-authenticator.js";
import { BEARER_CHALLENGE, INVALID_TOKEN_CHALLENGE } from "../../../src/token/token-errors.js";
import {
  createListTokensHandler,
  DEFAULT_LIST_PAGE_SIZE,
  type ListTokensHandler,
} from "../../../src/token/token-service.js";
import { connectError } from "../../support/connect-error.js";
import { redisServerSuite } from "../../support/redis-server-suite.js";
import { STORE_SETTINGS } from "../../support/store-settings.js";
import { storedToken } from "../../support/stored-token.js";

const SIGNER_PUBLIC_KEY = "ef".repeat(32);
const DAY_MS = 86_400_000;

/** A call of ListTokens with this Authorization header (none when undefined). */
function call(
  handler: ListTokensHandler,
  authorization: string | undefined,
  page: { pageSize?: number; pageToken?: string } = {},
) {
  const ctx = createHandlerContext({
    service: TokenService,
    method: TokenService.method.listTokens,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://localhost/perps.token.v1.TokenService/ListTokens",
    requestHeader: authorization === undefined ? {} : { authorization },
  });
  return handler(create(ListTokensRequestSchema, page), ctx);
}

/** Code, message and response headers of a refusal. */
const refusal = (e: ConnectError) => ({
  code: e.code,
  message: e.rawMessage,
  headers: Object.fromEntries(e.metadata),
});

// The handler over the real store and authenticator, and a private redis-server.
describe("createListTokensHandler", () => {
  const { redis } = redisServerSuite();

  /** A new user and a maker of its stored tokens, which answers the token's text. */
  async function newUser(store: TokenStore) {
    const userId = randomUUID();
    await redis.sadd(redisKeysOf(userId).publicKeys, SIGNER_PUBLIC_KEY);
    return async (name: string | undefined, expiresAtMs: number) => {
      return storedToken(store, { userId, signerPublicKey: SIGNER_PUBLIC_KEY, name, expiresAtMs });
    };
  }

  function handlerOver(store: TokenStore) {
    return createListTokensHandler({ store, authenticator: createBearerAuthenticator({ store }) });
  }

  it("lists the caller's user's named tokens by expiry, each expiry a UTC date; session tokens authenticate but are not listed", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const tokenOf = await newUser(store);
    const soon = Date.UTC(2099, 0, 1, 12);
    const session = await tokenOf(undefined, soon);
    const later = await tokenOf("later", soon + DAY_MS);
    const ci = await tokenOf("ci", soon);
    // Another user's tokens are not the caller's.
    await (await newUser(store))("other", soon);

    const answer = await call(handlerOver(store), `Bearer ${session.token}`);
    assert.deepEqual(
      answer.tokens.map((t) => [t.id, t.name, t.expiresAt]),
      [
        [ci.tokenId, "ci", "2099-01-01"],
        [later.tokenId, "later", "2099-01-02"],
      ],
    );
    assert.equal(answer.nextPageToken, "");
    // A named token lists the same.
    assert.deepEqual(await call(handlerOver(store), `Bearer ${ci.token}`), answer);
  });

  it("answers a page of page_size, and where the next resumes; 50 when page_size is 0", async () => {
    const store = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis },
      rateLimitPerMinute: 1000,
    });
    const tokenOf = await newUser(store);
    const at = Date.UTC(2099, 0, 1);
    const names = Array.from({ length: DEFAULT_LIST_PAGE_SIZE + 1 }, (_, i) => `t${i + 100}`);
    let bearer = "";
    for (const name of names) {
      bearer = (await tokenOf(name, at)).token;
    }
    const handler = handlerOver(store);
    const first = await call(handler, `Bearer ${bearer}`, { pageSize: 2 });
    assert.deepEqual(
      first.tokens.map((t) => t.name),
      names.slice(0, 2),
    );
    assert.notEqual(first.nextPageToken, "");
    const second = await call(handler, `Bearer ${bearer}`, {
      pageSize: 2,
      pageToken: first.nextPageToken,
    });
    assert.deepEqual(
      second.tokens.map((t) => t.name),
      names.slice(2, 4),
    );
    const whole = await call(handler, `Bearer ${bearer}`);
    assert.deepEqual(
      whole.tokens.map((t) => t.name),
      names.slice(0, DEFAULT_LIST_PAGE_SIZE),
    );
    const last = await call(handler, `Bearer ${bearer}`, { pageToken: whole.nextPageToken });
    assert.deepEqual(
      last.tokens.map((t) => t.name),
      names.slice(DEFAULT_LIST_PAGE_SIZE),
    );
    assert.equal(last.nextPageToken, "");
  });

  it("refuses a call without Bearer credentials with the bearer challenge", async () => {
    const handler = handlerOver(createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } }));
    for (const authorization of [undefined, "", "Basic dXNlcjpwYXNz", "Bearerpt_x"]) {
      assert.deepEqual(refusal(await connectError(call(handler, authorization))), {
        code: Code.Unauthenticated,
        message: "Bearer token required",
        headers: { "www-authenticate": BEARER_CHALLENGE },
      });
    }
  });

  it("refuses a token that is not live with one answer, whatever the reason", async () => {
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } });
    const tokenOf = await newUser(store);
    const expired = await tokenOf("old", Date.now() - 1);
    const live = await tokenOf("live", Date.now() + 60_000);
    const handler = handlerOver(store);
    // The live token with its last character changed (to one it does not already have).
    const changed = `${live.token.slice(0, -1)}${live.token.endsWith("A") ? "B" : "A"}`;
    const bad = ["", "pt_nope", expired.token, changed, `${live.token}A`];
    for (const token of bad) {
      assert.deepEqual(refusal(await connectError(call(handler, `Bearer ${token}`.trim()))), {
        code: Code.Unauthenticated,
        message: "Invalid token",
        headers: { "www-authenticate": INVALID_TOKEN_CHALLENGE },
      });
    }
  });

  it("refuses a page_token it did not issue, before looking at the bearer token", async () => {
    const handler = handlerOver(createTokenStore({ ...STORE_SETTINGS, redis: { client: redis } }));
    for (const pageToken of ["!", "MTp4Om4", "abc="]) {
      assert.deepEqual(
        refusal(await connectError(call(handler, "Bearer pt_nope", { pageToken }))),
        {
          code: Code.InvalidArgument,
          message:
            "pageToken: not a page token of this service; send back a nextPageToken as received",
          headers: {},
        },
      );
    }
  });

  it("refuses a call over the user's list rate with RESOURCE_EXHAUSTED and retry-after", async () => {
    const store = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis },
      listRateLimitPerMinute: 1,
    });
    const { token } = await (await newUser(store))("ci", Date.now() + 60_000);
    const handler = handlerOver(store);
    assert.equal((await call(handler, `Bearer ${token}`)).tokens.length, 1);
    const e = await connectError(call(handler, `Bearer ${token}`));
    assert.equal(e.code, Code.ResourceExhausted);
    assert.match(e.metadata.get("retry-after") ?? "", /^[1-9][0-9]*$/);
  });
});
