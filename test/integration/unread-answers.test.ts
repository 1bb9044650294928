import assert from "node:assert/strict";
import { type ClientHttp2Session, connect, constants as h2 } from "node:http2";
import { after, before, describe, it } from "node:test";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { createGrpcClient } from "../support/grpc-client.js";
import { newUser, signedCreate } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Issue 34, item 2: answers a client does not take in must not pin memory.
// A client whose HTTP/2 window is 0 gets its answers' headers, never their
// data; the service resets each such stream within 2 x ANSWER_TIMEOUT_MS.

const ANSWER_TIMEOUT_MS = 500;
/** 2 x the timeout, plus room for a loaded machine: far below the 120 s idle timeout that held them before. */
const RESET_BOUND_MS = 2 * ANSWER_TIMEOUT_MS + 4000;
const STREAMS = 40;

describe("an answer the client does not take in", () => {
  let redis: TestRedis;
  let service: TestService;
  let token = "";

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({ redis: redis.topology, answerTimeoutMs: ANSWER_TIMEOUT_MS });
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    const tokens = createGrpcClient(TokenService, service.internalAddress);
    try {
      const user = await newUser();
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      for (let i = 0; i < 20; i++) {
        const name = `${"😀".repeat(120)}${i}`;
        token = (await tokens.createToken(await signedCreate(user, { name }))).token;
      }
    } finally {
      keys.close();
      tokens.close();
    }
  });

  after(async () => {
    await service.stop();
    await redis.dispose();
  });

  /** A session that never lets the service send a byte of data. */
  async function windowZeroSession(): Promise<ClientHttp2Session> {
    const session = connect(service.publicUrl, { settings: { initialWindowSize: 0 } });
    await new Promise<void>((resolve, reject) => {
      session.once("remoteSettings", () => resolve());
      session.once("error", reject);
    });
    return session;
  }

  /** Opens a stream and resolves with its answer's status and how the stream ended, and when. */
  function openStream(
    session: ClientHttp2Session,
    headers: Record<string, string>,
    body: Buffer | undefined,
  ): Promise<{ status: number | undefined; rstCode: number; closedAfterMs: number; data: number }> {
    const started = Date.now();
    const stream = session.request(headers, { endStream: body === undefined });
    if (body !== undefined) {
      stream.end(body);
    }
    let status: number | undefined;
    let data = 0;
    stream.on("response", (h) => {
      status = Number(h[":status"]);
    });
    stream.on("data", (chunk: Buffer) => {
      data += chunk.length;
    });
    stream.on("error", () => {
      // A reset stream errors on the client; its rstCode says why.
    });
    return new Promise((resolve) => {
      stream.on("close", () =>
        resolve({
          status,
          rstCode: stream.rstCode ?? -1,
          closedAfterMs: Date.now() - started,
          data,
        }),
      );
    });
  }

  it("REST and gRPC list streams are reset (CANCEL) within the bound, and the session goes on", async () => {
    const session = await windowZeroSession();
    try {
      const authority = new URL(service.publicUrl).host;
      const rest = Array.from({ length: STREAMS / 2 }, () =>
        openStream(
          session,
          {
            ":method": "GET",
            ":path": "/user/tokens?pageSize=100",
            ":authority": authority,
            authorization: `Bearer ${token}`,
          },
          undefined,
        ),
      );
      // gRPC (the raw stream path): an empty ListTokensRequest, framed.
      const grpc = Array.from({ length: STREAMS / 2 }, () =>
        openStream(
          session,
          {
            ":method": "POST",
            ":path": "/perps.token.v1.TokenService/ListTokens",
            ":authority": authority,
            "content-type": "application/grpc",
            te: "trailers",
            authorization: `Bearer ${token}`,
          },
          Buffer.from([0, 0, 0, 0, 0]),
        ),
      );
      const bound = new Promise<"timeout">((resolve) =>
        setTimeout(() => resolve("timeout"), RESET_BOUND_MS).unref(),
      );
      const ended = await Promise.race([Promise.all([...rest, ...grpc]), bound]);
      assert.notEqual(ended, "timeout", `streams still open after ${RESET_BOUND_MS} ms`);
      assert.ok(ended !== "timeout");
      for (const stream of ended) {
        assert.equal(stream.status, 200, "the answer had begun");
        assert.equal(stream.data, 0, "with a window of 0 no data came");
        assert.equal(stream.rstCode, h2.NGHTTP2_CANCEL, "the service reset it");
        assert.ok(stream.closedAfterMs >= ANSWER_TIMEOUT_MS, `${stream.closedAfterMs} ms`);
      }
      // Only the streams were reset: the session still answers.
      assert.equal(session.closed || session.destroyed, false);
      await new Promise<void>((resolve, reject) =>
        session.ping((err) => (err === null ? resolve() : reject(err))),
      );
    } finally {
      session.destroy();
    }
  });

  it("a client that reads gets its whole answer, however long the answer takes to start", async () => {
    const res = await fetch(`${service.publicUrl}/user/tokens?pageSize=100`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { tokens: unknown[] };
    assert.equal(body.tokens.length, 20);
  });
});
