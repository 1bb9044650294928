import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus, Metadata } from "@grpc/grpc-js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { loadOpenApiDocument } from "../../src/openapi/openapi-endpoint.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import { createOpenApiResponseChecker } from "../support/openapi-response-checker.js";
import { newUser, signedCreate, signedDelete, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// ListTokens' pages and rate (issue 34): GET /user/tokens?pageSize=..&pageToken=..
// and page_size / page_token / next_page_token on Connect and gRPC; a list
// rate per user answered 429 / RESOURCE_EXHAUSTED with Retry-After.

const PATH = "/user/tokens";
/** The list rate of the rate-limited service: 4 a minute, so a call comes back within 15 s. */
const LIST_RATE = 4;

const openApi = createOpenApiResponseChecker(loadOpenApiDocument());

interface Listed {
  id: string;
  name: string;
  expiresAt: string;
}

interface RestPage {
  status: number;
  headers: Headers;
  text: string;
}

describe("ListTokens pages and rate", () => {
  let redis: TestRedis;
  let service: TestService;
  let limited: TestService;
  let grpcKeys: ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>;
  let grpcTokens: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;
  let limitedGrpc: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;

  async function registeredUser(): Promise<TestUser> {
    const user = await newUser();
    await grpcKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    return user;
  }

  async function created(user: TestUser, name?: string): Promise<{ token: string; id: string }> {
    const res = await grpcTokens.createToken(
      await signedCreate(user, name === undefined ? {} : { name }),
    );
    return { token: res.token, id: res.id };
  }

  /** GET /user/tokens with a query, the answer checked against openapi.json. */
  async function restPage(base: string, token: string, query = ""): Promise<RestPage> {
    const res = await fetch(`${base}${PATH}${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const answer = { status: res.status, headers: res.headers, text: await res.text() };
    openApi.check({ method: "GET", path: PATH, ...answer });
    return answer;
  }

  /** Every page over REST, `between` run between pages; the pages' sizes too. */
  async function restAll(token: string, pageSize: number, between: () => Promise<void>) {
    const tokens: Listed[] = [];
    const sizes: number[] = [];
    let pageToken = "";
    do {
      const query = `?pageSize=${pageSize}${pageToken === "" ? "" : `&pageToken=${pageToken}`}`;
      const answer = await restPage(service.publicUrl, token, query);
      assert.equal(answer.status, 200, answer.text);
      const body = JSON.parse(answer.text) as { tokens: Listed[]; nextPageToken?: string };
      tokens.push(...body.tokens);
      sizes.push(body.tokens.length);
      pageToken = body.nextPageToken ?? "";
      if (pageToken !== "") {
        assert.match(pageToken, /^[A-Za-z0-9_-]+$/, "opaque, and safe in a query as is");
        await between();
      }
    } while (pageToken !== "");
    return { tokens, sizes };
  }

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({ redis: redis.topology });
    limited = await startTestService({
      redis: redis.topology,
      tokenListRateLimitPerMinute: LIST_RATE,
    });
    grpcKeys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    grpcTokens = createGrpcClient(TokenService, service.internalAddress);
    limitedGrpc = createGrpcClient(TokenService, limited.publicAddress);
  });

  after(async () => {
    grpcKeys.close();
    grpcTokens.close();
    limitedGrpc.close();
    await limited.stop();
    await service.stop();
    await redis.dispose();
  });

  it("REST pages list every token live throughout exactly once, with creates and deletes between pages", async () => {
    const user = await registeredUser();
    const made: { token: string; id: string }[] = [];
    for (let i = 0; i < 23; i++) {
      made.push(await created(user, `token-${String(i).padStart(2, "0")}`));
    }
    const session = await created(user);
    // Between pages: delete one token, create one.
    const deleted = new Set<string>();
    const added = new Set<string>();
    let round = 0;
    const { tokens, sizes } = await restAll(session.token, 4, async () => {
      round++;
      const gone = made[round * 3];
      if (gone !== undefined) {
        await grpcTokens.deleteToken(await signedDelete(user, gone.id));
        deleted.add(gone.id);
      }
      added.add((await created(user, `added-${round}`)).id);
    });
    const ids = tokens.map((t) => t.id);
    assert.equal(new Set(ids).size, ids.length, "no token twice");
    for (const t of made.filter((m) => !deleted.has(m.id))) {
      assert.ok(ids.includes(t.id), "every token live throughout is listed");
    }
    for (const id of ids) {
      assert.ok(made.some((m) => m.id === id) || added.has(id), "only the user's named tokens");
    }
    assert.ok(
      sizes.every((n) => n <= 4),
      `no page above pageSize: ${sizes.join(",")}`,
    );
    assert.ok(
      sizes.length >= 6 && deleted.size >= 5,
      `${sizes.length} pages, ${deleted.size} deleted`,
    );
  });

  it("Connect and gRPC page alike with page_size, page_token and next_page_token; the default page is 50", async () => {
    const user = await registeredUser();
    const made: string[] = [];
    for (let i = 0; i < 53; i++) {
      made.push((await created(user, `n${i}`)).id);
    }
    const token = (await created(user)).token;
    const connect = createClient(
      TokenService,
      createConnectTransport({ baseUrl: service.publicUrl, httpVersion: "2" }),
    );
    const headers = { authorization: `Bearer ${token}` };
    const first = await connect.listTokens({}, { headers });
    assert.equal(first.tokens.length, 50, "page_size 0 means 50");
    assert.notEqual(first.nextPageToken, "");
    const rest = await connect.listTokens({ pageToken: first.nextPageToken }, { headers });
    assert.equal(rest.tokens.length, 3);
    assert.equal(rest.nextPageToken, "", "the last page says so");
    assert.deepEqual([...first.tokens, ...rest.tokens].map((t) => t.id).sort(), [...made].sort());
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${token}`);
    const grpc = createGrpcClient(TokenService, service.publicAddress);
    try {
      const page = await grpc.listTokens({ pageSize: 50 }, metadata);
      assert.deepEqual(
        page.tokens.map((t) => t.id),
        first.tokens.map((t) => t.id),
      );
      assert.equal(page.nextPageToken, first.nextPageToken, "one cursor for every protocol");
      // A page size above 100, or a page token this service did not issue: INVALID_ARGUMENT.
      for (const req of [{ pageSize: 101 }, { pageToken: "bm90LWEtY3Vyc29y" }]) {
        await assert.rejects(grpc.listTokens(req, metadata), (err: unknown) => {
          assert.ok(isGrpcError(err, GrpcStatus.INVALID_ARGUMENT), String(err));
          return true;
        });
      }
    } finally {
      grpc.close();
    }
    for (const query of [
      "?pageSize=101",
      "?pageSize=-1",
      "?pageToken=%2F%2F",
      `?pageToken=${"A".repeat(1025)}`,
    ]) {
      const answer = await restPage(service.publicUrl, token, query);
      assert.equal(answer.status, 400, `${query}: ${answer.text}`);
    }
  });

  it("over the list rate: 429 with Retry-After (REST), RESOURCE_EXHAUSTED with retry-after (gRPC, Connect); other users and checks unaffected", async () => {
    const user = await registeredUser();
    const { token } = await created(user, "mine");
    for (let i = 0; i < LIST_RATE; i++) {
      assert.equal((await restPage(limited.publicUrl, token)).status, 200);
    }
    const refused = await restPage(limited.publicUrl, token);
    assert.equal(refused.status, 429, refused.text);
    const retry = Number(refused.headers.get("retry-after"));
    assert.ok(retry >= 1 && retry <= 15, `Retry-After ${refused.headers.get("retry-after")}`);
    assert.deepEqual(JSON.parse(refused.text), {
      code: Code.ResourceExhausted,
      message: "too many token requests for this user; retry later",
      details: [],
    });
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${token}`);
    await assert.rejects(limitedGrpc.listTokens({}, metadata), (err: unknown) => {
      assert.ok(isGrpcError(err, GrpcStatus.RESOURCE_EXHAUSTED), String(err));
      const seconds = Number(err.metadata.get("retry-after")[0]);
      assert.ok(seconds >= 1 && seconds <= 15, String(seconds));
      return true;
    });
    const connect = createClient(
      TokenService,
      createConnectTransport({ baseUrl: limited.publicUrl, httpVersion: "1.1" }),
    );
    await assert.rejects(
      connect.listTokens({}, { headers: { authorization: `Bearer ${token}` } }),
      (err: unknown) => {
        assert.ok(err instanceof ConnectError);
        assert.equal(err.code, Code.ResourceExhausted);
        assert.ok(Number(err.metadata.get("retry-after")) >= 1);
        return true;
      },
    );
    // Another user lists; the limited user's token still checks, and still creates.
    const other = await registeredUser();
    const theirs = await created(other, "theirs");
    assert.equal((await restPage(limited.publicUrl, theirs.token)).status, 200);
    for (let i = 0; i < 3; i++) {
      const check = await fetch(`${limited.internalUrl}/auth`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(check.status, 200);
      await check.arrayBuffer();
    }
    assert.ok((await created(user, "still creates")).id.length > 0);
  });
});
