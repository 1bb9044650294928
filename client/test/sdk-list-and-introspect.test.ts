import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ScalarType } from "@bufbuild/protobuf";
import {
  CreateTokenRequestSchema,
  TokenSummarySchema,
} from "../src/gen/perps/token/v1/token_pb.js";
import {
  Code,
  createIntrospectionClient,
  createTokenClient,
  type IntrospectionTransport,
  TokenApiError,
} from "../src/sdk/node.js";
import { INACTIVE_INTROSPECTION } from "./support/inactive-introspection.js";
import {
  apiError,
  type Harness,
  harness,
  harnessSuite,
  TRANSPORTS,
} from "./support/sdk-harness.js";
import { comparable, tokenSummary } from "./support/token-summary.js";

describe("SDK listTokens", () => {
  const h = harnessSuite();

  for (const transport of TRANSPORTS) {
    const status = (http: number) => (transport === "rest" ? http : undefined);

    // A field that CreateTokenRequest and TokenSummary share by name is stored
    // and listed: each one is checked here as it is declared (token.proto),
    // through the service, its store and the SDK, with no change to this test.
    it(`${transport}: every field TokenSummary shares with CreateTokenRequest lists as created`, async () => {
      const shared = TokenSummarySchema.fields.filter(
        (field) => field.localName in CreateTokenRequestSchema.field,
      );
      assert.ok(shared.some((field) => field.localName === "name"));
      const user = await h.user();
      const params = { userId: user.userId };
      // Lists need values the service takes (scopes by name, addresses that parse).
      const lists: Record<string, string[]> = {
        scopes: ["read", "transfer"],
        allowedIps: ["203.0.113.7", "2001:db8::/32"],
      };
      for (const field of shared) {
        const sample =
          field.fieldKind === "scalar" && field.scalar === ScalarType.STRING
            ? `${field.localName} ü ${transport}`
            : lists[field.localName];
        assert.ok(sample !== undefined, `${field.localName}: give this test a sample of its type`);
        Reflect.set(params, field.localName, sample);
      }
      const client = h.client(transport, user);
      const created = await client.createToken(params);
      const [listed] = await client.listTokens(created.token);
      for (const field of shared) {
        assert.deepEqual(
          listed === undefined ? undefined : Reflect.get(listed, field.localName),
          Reflect.get(params, field.localName),
          `${field.localName}: stored and listed as created`,
        );
      }
    });

    it(`${transport}: lists the user's live named tokens by expiry, with any of the user's tokens`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const session = await client.createToken({ userId: user.userId });
      const named = new Map<string, { id: string; token: string; expiresAt: string }>();
      for (const name of ["b", "é", "a", "Z"]) {
        named.set(name, await client.createToken({ userId: user.userId, name, expiresIn: 3600 }));
      }
      // Created one after the other with one lifetime: each expires after the one before.
      const expected = ["b", "é", "a", "Z"].map((name) => {
        const t = named.get(name);
        return tokenSummary({ id: t?.id ?? "", name, expiresAt: t?.expiresAt ?? "" });
      });
      // A session token and a named one list the same; session tokens are never listed.
      assert.deepEqual(comparable(await client.listTokens(session.token)), expected);
      assert.deepEqual(comparable(await client.listTokens(named.get("b")?.token ?? "")), expected);
      // A deleted token is no longer listed.
      await client.deleteToken({ userId: user.userId, tokenId: named.get("a")?.id ?? "" });
      assert.deepEqual(
        (await client.listTokens(session.token)).map((t) => t.name),
        ["b", "é", "Z"],
      );
      // Every page, whatever the page size; or one page and where the next starts.
      assert.deepEqual(comparable(await client.listTokens(session.token, { pageSize: 1 })), [
        expected[0],
        expected[1],
        expected[3],
      ]);
      const first = await client.listTokenPage(session.token, { pageSize: 2 });
      assert.deepEqual(comparable(first.tokens), [expected[0], expected[1]]);
      assert.notEqual(first.nextPageToken, "");
      const last = await client.listTokenPage(session.token, {
        pageSize: 2,
        pageToken: first.nextPageToken,
      });
      assert.deepEqual(
        { ...last, tokens: comparable(last.tokens) },
        { tokens: [expected[3]], nextPageToken: "" },
      );
    });

    it(`${transport}: a user without named tokens gets [] (and another user's tokens never show)`, async () => {
      const user = await h.user();
      const other = await h.user();
      await h.client(transport, other).createToken({ userId: other.userId, name: "theirs" });
      const session = await h.client(transport, user).createToken({ userId: user.userId });
      // A client without a signer lists: only create and delete sign.
      const lister = createTokenClient({ baseUrl: h.service.publicUrl, transport });
      try {
        assert.deepEqual(await lister.listTokens(session.token), []);
        await assert.rejects(lister.createToken({ userId: user.userId }), /^TypeError: signer: /);
      } finally {
        lister.close();
      }
    });

    it(`${transport}: a bad token is UNAUTHENTICATED "Invalid token" (401 on REST), whatever the reason`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const deleted = await client.createToken({ userId: user.userId, name: "gone" });
      await client.deleteToken({ userId: user.userId, tokenId: deleted.id });
      for (const token of [deleted.token, `${deleted.token.slice(0, -1)}x`, "pt_nope"]) {
        await assert.rejects(
          client.listTokens(token),
          apiError(Code.Unauthenticated, "Invalid token", status(401)),
        );
      }
      // No header can carry it: refused the same way, without a call.
      await assert.rejects(
        client.listTokens("pt_\u00e9\n"),
        apiError(Code.Unauthenticated, "Invalid token"),
      );
    });

    it(`${transport}: a service that cannot be reached is UNAVAILABLE; an aborted list is CANCELLED`, async () => {
      const user = await h.user();
      const { token } = await h.client(transport, user).createToken({ userId: user.userId });
      const client = createTokenClient({ baseUrl: "http://127.0.0.1:1", transport });
      try {
        await assert.rejects(
          client.listTokens(token),
          (err) => err instanceof TokenApiError && err.code === Code.Unavailable,
        );
      } finally {
        client.close();
      }
      await assert.rejects(
        h.client(transport, user).listTokens(token, { signal: AbortSignal.abort() }),
        (err) => err instanceof TokenApiError && err.code === Code.Canceled,
      );
    });
  }
});

describe("SDK introspectToken (internal listener)", () => {
  const INTROSPECTION_TRANSPORTS: readonly IntrospectionTransport[] = ["connect", "grpc"];
  const INACTIVE = INACTIVE_INTROSPECTION;
  let h: Harness;
  const introspections: ReturnType<typeof createIntrospectionClient>[] = [];
  function introspection(transport: IntrospectionTransport, baseUrl = h.service.internalUrl) {
    const client = createIntrospectionClient({ baseUrl, transport });
    introspections.push(client);
    return client;
  }
  before(async () => {
    h = await harness();
  });
  after(async () => {
    for (const client of introspections) {
      client.close();
    }
    await h.close();
  });

  it('defaults to "connect"', () => {
    assert.equal(
      createIntrospectionClient({ baseUrl: h.service.internalUrl }).transport,
      "connect",
    );
  });

  it('"rest" is refused when the client is made: IntrospectToken has no REST mapping', () => {
    assert.throws(
      () =>
        createIntrospectionClient({
          baseUrl: h.service.internalUrl,
          transport: "rest" as IntrospectionTransport,
        }),
      /^TypeError: transport: must be "connect" or "grpc", not rest \(IntrospectToken has no REST mapping\)$/,
    );
  });

  for (const transport of INTROSPECTION_TRANSPORTS) {
    it(`${transport}: a live named token is active, with every field`, async () => {
      const user = await h.user();
      const from = Date.now();
      const created = await h
        .client("rest", user)
        .createToken({ userId: user.userId.toUpperCase(), name: "bot", expiresIn: 3600 });
      const to = Date.now();
      const answer = await introspection(transport).introspectToken(created.token);
      assert.deepEqual(
        { ...answer, expiresAtMs: 0 },
        {
          active: true,
          userId: user.userId.toLowerCase(),
          tokenId: created.id,
          name: "bot",
          expiresAt: created.expiresAt,
          expiresAtMs: 0,
          scopes: ["read", "trade"],
        },
      );
      assert.equal(typeof answer.expiresAtMs, "number");
      assert.ok(
        answer.expiresAtMs >= from + 3_600_000 && answer.expiresAtMs <= to + 3_600_000,
        String(answer.expiresAtMs),
      );
      assert.equal(new Date(answer.expiresAtMs).toISOString().slice(0, 10), created.expiresAt);
    });

    it(`${transport}: a session token is active with name ""; inactive once deleted`, async () => {
      const user = await h.user();
      const client = h.client("rest", user);
      const session = await client.createToken({ userId: user.userId });
      const checker = introspection(transport);
      const live = await checker.introspectToken(session.token);
      assert.equal(live.active, true);
      assert.equal(live.name, "");
      assert.equal(live.tokenId, session.id);
      await client.deleteToken({ userId: user.userId, tokenId: session.id });
      assert.deepEqual(await checker.introspectToken(session.token), INACTIVE);
    });

    it(`${transport}: anything that is not a live token is inactive, never an error`, async () => {
      const user = await h.user();
      const { token } = await h.client("rest", user).createToken({ userId: user.userId });
      const checker = introspection(transport);
      // The last character changed (to one it is not: a token may end in "x").
      const altered = `${token.slice(0, -1)}${token.endsWith("x") ? "y" : "x"}`;
      for (const bad of ["", "pt_nope", altered, `${token} `, "é\n"]) {
        assert.deepEqual(await checker.introspectToken(bad), INACTIVE, JSON.stringify(bad));
      }
    });

    it(`${transport}: the public listener does not serve it (UNIMPLEMENTED); unreachable is UNAVAILABLE`, async () => {
      await assert.rejects(
        introspection(transport, h.service.publicUrl).introspectToken("pt_x"),
        (err) => err instanceof TokenApiError && err.code === Code.Unimplemented,
      );
      await assert.rejects(
        introspection(transport, "http://127.0.0.1:1").introspectToken("pt_x"),
        (err) => err instanceof TokenApiError && err.code === Code.Unavailable,
      );
    });
  }
});
