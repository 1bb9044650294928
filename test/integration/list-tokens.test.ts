import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus, Metadata } from "@grpc/grpc-js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { generateToken, tokenIdOf } from "@perps/token-client/protocol";
import { loadOpenApiDocument } from "../../src/openapi/openapi-endpoint.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import { createOpenApiResponseChecker } from "../support/openapi-response-checker.js";
import { newUser, signedCreate, signedDelete, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// ListTokens (issue #13): GET /user/tokens and TokenService/ListTokens on
// Connect and gRPC, authenticated by `Authorization: Bearer <token>`.

const PATH = "/user/tokens";
const MISSING = 'Bearer realm="perps-tokens"';
const INVALID = 'Bearer realm="perps-tokens", error="invalid_token"';
const UNAUTHENTICATED = 16;

const openApi = createOpenApiResponseChecker(loadOpenApiDocument());

interface Listed {
  id: string;
  name: string;
  expiresAt: string;
}

interface RestAnswer {
  status: number;
  headers: Headers;
  text: string;
}

const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe("ListTokens", () => {
  let redis: TestRedis;
  let service: TestService;
  let second: TestService;
  let grpcKeys: ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>;
  let grpcTokens: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;
  let publicGrpc: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;
  let connect: ReturnType<typeof createClient<typeof TokenService>>;

  async function registeredUser(userId?: string): Promise<TestUser> {
    const user = await newUser(userId);
    await grpcKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    return user;
  }

  /** Creates a token (over gRPC); its bearer value and id. */
  async function created(
    user: TestUser,
    fields: { name?: string; expiresIn?: bigint; userId?: string } = {},
  ): Promise<{ token: string; id: string; expiresAt: string }> {
    const res = await grpcTokens.createToken(await signedCreate(user, fields));
    return { token: res.token, id: res.id, expiresAt: res.expiresAt };
  }

  /** GET /user/tokens on `base`, the answer checked against openapi.json. */
  async function restList(
    authorization: string | undefined,
    base = service.publicUrl,
  ): Promise<RestAnswer> {
    const res = await fetch(`${base}${PATH}`, {
      headers: authorization === undefined ? {} : { authorization },
    });
    const answer = { status: res.status, headers: res.headers, text: await res.text() };
    openApi.check({ method: "GET", path: PATH, ...answer });
    return answer;
  }

  /** The tokens of a 200 REST answer, asserting its exact shape. */
  function restTokens(answer: RestAnswer): Listed[] {
    assert.equal(answer.status, 200, answer.text);
    const body: unknown = JSON.parse(answer.text);
    assert.ok(typeof body === "object" && body !== null && "tokens" in body, answer.text);
    assert.deepEqual(Object.keys(body), ["tokens"]);
    assert.ok(Array.isArray(body.tokens));
    // Since issue 42 each entry also says its scopes, its creation, its exact expiry and its
    // last use (token-last-use.test.ts), once a use of it was written.
    return (body.tokens as Record<string, unknown>[]).map(
      ({ scopes, createdAt, expiresAtTime, lastUsedAt: _used, ...entry }) => {
        assert.deepEqual(scopes, ["read", "trade"]);
        assert.equal(typeof createdAt, "string");
        assert.equal(String(expiresAtTime).slice(0, 10), entry.expiresAt);
        return entry as unknown as Listed;
      },
    );
  }

  const bearer = (token: string) => `Bearer ${token}`;

  async function grpcList(authorization: string | undefined) {
    const metadata = new Metadata();
    if (authorization !== undefined) {
      metadata.set("authorization", authorization);
    }
    return publicGrpc.listTokens({}, metadata);
  }

  async function connectList(authorization: string | undefined) {
    return connect.listTokens(
      {},
      authorization === undefined ? {} : { headers: { authorization } },
    );
  }

  /** The same list over REST, Connect and gRPC, as REST spells it. */
  async function listEverywhere(token: string): Promise<Listed[]> {
    const rest = restTokens(await restList(bearer(token)));
    const plain = (tokens: Listed[]) =>
      tokens.map(({ id, name, expiresAt }) => ({ id, name, expiresAt }));
    assert.deepEqual(plain((await connectList(bearer(token))).tokens), rest);
    assert.deepEqual(plain((await grpcList(bearer(token))).tokens), rest);
    return rest;
  }

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({ redis: redis.topology });
    second = await startTestService({ redis: redis.topology });
    grpcKeys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    grpcTokens = createGrpcClient(TokenService, service.internalAddress);
    publicGrpc = createGrpcClient(TokenService, service.publicAddress);
    connect = createClient(
      TokenService,
      createConnectTransport({ baseUrl: service.publicUrl, httpVersion: "1.1" }),
    );
  });

  after(async () => {
    grpcKeys.close();
    grpcTokens.close();
    publicGrpc.close();
    await second.stop();
    await service.stop();
    await redis.dispose();
  });

  describe("answers", () => {
    it("lists the user's named tokens with id, name and expiresAt, on REST, Connect and gRPC", async () => {
      const user = await registeredUser();
      const bot = await created(user, { name: "bot", expiresIn: 3600n });
      const year = await created(user, { name: "yearly", expiresIn: 31_536_000n });
      const tokens = await listEverywhere(bot.token);
      assert.deepEqual(tokens, [
        { id: bot.id, name: "bot", expiresAt: bot.expiresAt },
        { id: year.id, name: "yearly", expiresAt: year.expiresAt },
      ]);
      // Any of the user's live tokens authenticates, and the internal listener (gRPC) answers the same.
      const metadata = new Metadata();
      metadata.set("authorization", bearer(year.token));
      const internal = await grpcTokens.listTokens({}, metadata);
      assert.deepEqual(
        internal.tokens.map(({ id, name, expiresAt }) => ({ id, name, expiresAt })),
        tokens,
      );
    });

    it("orders by expiry, soonest first (ties by name bytes: token-store-list-pages.test.ts)", async () => {
      const user = await registeredUser();
      // Each later one expires sooner, so the order is not the creation's or the names'.
      const names = ["b", "a", "é", "Z", "😀", "ﬁ"];
      let token = "";
      for (const [i, name] of names.entries()) {
        token = (await created(user, { name, expiresIn: BigInt(90_000 - i * 3600) })).token;
      }
      const listed = (await listEverywhere(token)).map((t) => t.name);
      assert.deepEqual(listed, [...names].reverse());
    });

    it("never lists or counts session tokens, which still authenticate", async () => {
      const user = await registeredUser();
      const session = await created(user);
      await created(user);
      const named = await created(user, { name: "only one" });
      assert.deepEqual(await listEverywhere(session.token), [
        { id: named.id, name: "only one", expiresAt: named.expiresAt },
      ]);
    });

    it('answers "tokens": [] for a user with only session tokens, on every protocol', async () => {
      const user = await registeredUser();
      const session = await created(user);
      const answer = await restList(bearer(session.token));
      assert.equal(answer.status, 200);
      assert.equal(answer.text, '{"tokens":[]}');
      assert.match(answer.headers.get("content-type") ?? "", /^application\/json/);
      assert.deepEqual(await listEverywhere(session.token), []);
    });

    it("isolates users: a token lists only its own user's tokens, whatever the case of the UUID", async () => {
      const alice = await registeredUser();
      const bob = await registeredUser();
      const aliceToken = await created(alice, { name: "shared name" });
      const bobToken = await created(bob, { name: "shared name" });
      assert.deepEqual(
        (await listEverywhere(aliceToken.token)).map((t) => t.id),
        [aliceToken.id],
      );
      assert.deepEqual(
        (await listEverywhere(bobToken.token)).map((t) => t.id),
        [bobToken.id],
      );
      // The same user under an upper-case id: one list, one set of names.
      const upper = await created(alice, { name: "upper", userId: alice.userId.toUpperCase() });
      assert.deepEqual(
        (await listEverywhere(upper.token)).map((t) => t.name),
        ["shared name", "upper"],
      );
      assert.deepEqual(
        (await listEverywhere(aliceToken.token)).map((t) => t.name),
        ["shared name", "upper"],
      );
    });
  });

  describe("revocation and expiry are immediate, on every instance", () => {
    it("a deleted token is gone from the list, and refused as a bearer, on a second process", async () => {
      const user = await registeredUser();
      const kept = await created(user, { name: "kept" });
      const gone = await created(user, { name: "gone" });
      // Both instances have answered with it before the delete.
      assert.equal(restTokens(await restList(bearer(gone.token), second.publicUrl)).length, 2);
      assert.equal(restTokens(await restList(bearer(kept.token))).length, 2);
      await grpcTokens.deleteToken(await signedDelete(user, gone.id));
      for (const base of [service.publicUrl, second.publicUrl]) {
        assert.deepEqual(
          restTokens(await restList(bearer(kept.token), base)).map((t) => t.name),
          ["kept"],
        );
        const refused = await restList(bearer(gone.token), base);
        assert.equal(refused.status, 401);
        assert.equal(refused.headers.get("www-authenticate"), INVALID);
      }
    });

    it("an expired token is gone from the list, and refused as a bearer, at once", async () => {
      const user = await registeredUser();
      const kept = await created(user, { name: "kept" });
      const brief = await created(user, { name: "brief", expiresIn: 1n });
      const sessionBrief = await created(user, { expiresIn: 1n });
      assert.deepEqual(
        (await listEverywhere(brief.token)).map((t) => t.name),
        ["brief", "kept"],
      );
      await new Promise((resolve) => setTimeout(resolve, 1100));
      for (const base of [service.publicUrl, second.publicUrl]) {
        assert.deepEqual(
          restTokens(await restList(bearer(kept.token), base)).map((t) => t.name),
          ["kept"],
        );
        for (const expired of [brief, sessionBrief]) {
          const refused = await restList(bearer(expired.token), base);
          assert.equal(refused.status, 401);
          assert.equal(refused.headers.get("www-authenticate"), INVALID);
        }
      }
    });
  });

  describe("401 UNAUTHENTICATED with WWW-Authenticate", () => {
    /** Every kind of refused Authorization header, with the challenge it must get. */
    async function refusals(): Promise<
      { name: string; header: string | undefined; want: string }[]
    > {
      const user = await registeredUser();
      const deleted = await created(user, { name: "deleted" });
      await grpcTokens.deleteToken(await signedDelete(user, deleted.id));
      const live = await created(user, { name: "live" });
      const liveId = live.id;
      const unknownId = tokenIdOf(randomBytes(32));
      const flipped = `${live.token.slice(0, 10)}${live.token[10] === "A" ? "B" : "A"}${live.token.slice(11)}`;
      return [
        { name: "no header", header: undefined, want: MISSING },
        { name: "Basic credentials", header: "Basic dXNlcjpwYXNz", want: MISSING },
        { name: "Bearer with nothing (an empty token)", header: "Bearer", want: INVALID },
        { name: "Bearer with only spaces (an empty token)", header: "Bearer   ", want: INVALID },
        { name: "Bearer with two words", header: `Bearer ${live.token} extra`, want: INVALID },
        { name: "the token without a scheme", header: live.token, want: MISSING },
        { name: "a malformed token", header: "Bearer pt_abc", want: INVALID },
        { name: "a token with a wrong checksum", header: bearer(flipped), want: INVALID },
        {
          name: "an unknown token (well formed, never created)",
          header: bearer(generateToken(randomUUID(), unknownId)),
          want: INVALID,
        },
        {
          name: "another secret for a live token's user and id",
          header: bearer(generateToken(user.userId, liveId)),
          want: INVALID,
        },
        { name: "a deleted token", header: bearer(deleted.token), want: INVALID },
      ];
    }

    it("over REST: the challenge as a header and the usual JSON error, one body for every bad token", async () => {
      const bodies = new Set<string>();
      for (const c of await refusals()) {
        const answer = await restList(c.header);
        assert.equal(answer.status, 401, c.name);
        assert.equal(answer.headers.get("www-authenticate"), c.want, c.name);
        const body = JSON.parse(answer.text);
        assert.equal(body.code, UNAUTHENTICATED, c.name);
        assert.deepEqual(body.details, [], c.name);
        if (c.want === INVALID) {
          bodies.add(answer.text);
        }
      }
      assert.equal(bodies.size, 1, [...bodies].join("\n"));
    });

    it("over Connect: the challenge as a response header of the 401", async () => {
      for (const c of await refusals()) {
        const res = await fetch(`${service.publicUrl}/perps.token.v1.TokenService/ListTokens`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(c.header === undefined ? {} : { authorization: c.header }),
          },
          body: "{}",
        });
        assert.equal(res.status, 401, c.name);
        assert.equal(res.headers.get("www-authenticate"), c.want, c.name);
        const body = (await res.json()) as { code?: unknown };
        assert.equal(body.code, "unauthenticated", c.name);
        // And as the Connect client sees it.
        const err = await connectList(c.header).then(
          () => assert.fail(`${c.name} was listed`),
          (e: unknown) => ConnectError.from(e),
        );
        assert.equal(err.code, Code.Unauthenticated, c.name);
        assert.equal(err.metadata.get("www-authenticate"), c.want, c.name);
      }
    });

    it("over gRPC: UNAUTHENTICATED with the challenge in the metadata", async () => {
      for (const c of await refusals()) {
        // @grpc/grpc-js sends no metadata entry at all for a value ending in
        // whitespace, so the service sees no header: the bare challenge.
        const want = c.header !== undefined && /\s$/.test(c.header) ? MISSING : c.want;
        await assert.rejects(grpcList(c.header), (err) => {
          assert.ok(isGrpcError(err, GrpcStatus.UNAUTHENTICATED), `${c.name}: ${String(err)}`);
          assert.deepEqual(err.metadata.get("www-authenticate"), [want], c.name);
          return true;
        });
      }
    });

    it("an expired token gets the invalid_token answer on all three protocols", async () => {
      const user = await registeredUser();
      const brief = await created(user, { name: "brief", expiresIn: 1n });
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const answer = await restList(bearer(brief.token));
      assert.equal(answer.status, 401);
      assert.equal(answer.headers.get("www-authenticate"), INVALID);
      const err = await connectList(bearer(brief.token)).then(
        () => assert.fail("listed"),
        (e: unknown) => ConnectError.from(e),
      );
      assert.equal(err.metadata.get("www-authenticate"), INVALID);
      await assert.rejects(
        grpcList(bearer(brief.token)),
        (e) =>
          isGrpcError(e, GrpcStatus.UNAUTHENTICATED) &&
          e.metadata.get("www-authenticate")[0] === INVALID,
      );
    });
  });

  it("writes no bearer token to the log", () => {
    // startTestService's stop() checks every line; this checks the lines so far.
    for (const line of [...service.logs, ...second.logs]) {
      assert.doesNotMatch(line, /pt_[A-Za-z0-9_-]{20}/);
      assert.doesNotMatch(line.toLowerCase(), /authorization/);
    }
    assert.ok(service.logs.some((line) => line.includes("ListTokens")));
  });

  it("expiresAt is the UTC date of the token's expiry", async () => {
    const user = await registeredUser();
    const sentAt = Date.now();
    const res = await created(user, { name: "dated", expiresIn: 86_400n });
    const listed = await listEverywhere(res.token);
    assert.equal(listed[0]?.expiresAt, res.expiresAt);
    assert.ok(
      [utcDate(sentAt + 86_400_000), utcDate(Date.now() + 86_400_000)].includes(
        listed[0]?.expiresAt ?? "",
      ),
    );
  });
});
