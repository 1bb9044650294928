import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "@perps/token-client/contract/google/rpc/error_details_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { newUser, type TestUser } from "../../../../test/support/signing.js";
import { ERROR_INFO_TYPE_URL } from "../../../src/protocol/error-reason.js";
import { fromConnectError } from "../../../src/sdk/connect-error-mapping.js";
import { TokenApiError } from "../../../src/sdk/token-api-error.js";
import { createTokenClient, type TokenTransport } from "../../../src/sdk/token-client.js";
import { INFO, MESSAGE, TOKEN_ID } from "../../support/replayed-create.js";

// The answer to a replayed create: TOKEN_ID, MESSAGE and INFO (support/replayed-create.ts).

function replayError(info: typeof INFO = INFO): ConnectError {
  return new ConnectError(MESSAGE, Code.AlreadyExists, undefined, [
    { desc: ErrorInfoSchema, value: info },
  ]);
}

function restBody(details: unknown[]): string {
  return JSON.stringify({ code: Code.AlreadyExists, message: MESSAGE, details });
}

const REST_DETAIL = { "@type": "type.googleapis.com/google.rpc.ErrorInfo", ...INFO };

describe("the REST side reads ErrorInfo without protobuf", () => {
  it("its @type is the generated ErrorInfo's", () => {
    assert.equal(ERROR_INFO_TYPE_URL, `type.googleapis.com/${ErrorInfoSchema.typeName}`);
  });
});

function alreadyCreated(transport: TokenTransport) {
  return (err: unknown) => {
    assert.ok(err instanceof TokenApiError, `not a TokenApiError: ${String(err)}`);
    assert.equal(err.code, Code.AlreadyExists);
    assert.equal(err.message, MESSAGE);
    assert.equal(err.createdTokenId, TOKEN_ID);
    assert.equal(err.httpStatus, transport === "rest" ? 409 : undefined);
    return true;
  };
}

describe("TokenApiError.createdTokenId from a ConnectError (connect and grpc)", () => {
  it("reads the ErrorInfo detail as given (outgoing form)", () => {
    const err = fromConnectError(replayError());
    assert.ok(err instanceof TokenApiError);
    assert.equal(err.createdTokenId, TOKEN_ID);
    assert.equal(err.code, Code.AlreadyExists);
  });

  it("reads it as decoded from the wire (google.protobuf.Any bytes)", () => {
    const value = toBinary(ErrorInfoSchema, create(ErrorInfoSchema, INFO));
    const wire = new ConnectError(MESSAGE, Code.AlreadyExists, undefined, undefined);
    wire.details.push({ type: "google.rpc.ErrorInfo", value });
    const err = fromConnectError(wire);
    assert.ok(err instanceof TokenApiError);
    assert.equal(err.createdTokenId, TOKEN_ID);
  });

  it("is undefined without that exact detail", () => {
    const others = [
      new ConnectError("name: a live token of this user already has this name", Code.AlreadyExists),
      replayError({ ...INFO, reason: "SOMETHING_ELSE" }),
      replayError({ ...INFO, domain: "example.com" }),
      replayError({ ...INFO, metadata: { tokenId: "" } }),
      replayError({ ...INFO, metadata: { tokenId: "abc; rm -rf ~" } }),
    ];
    for (const other of others) {
      const err = fromConnectError(other);
      assert.ok(err instanceof TokenApiError);
      assert.equal(err.createdTokenId, undefined, other.message);
    }
  });
});

describe("TokenApiError.createdTokenId from a REST error body", () => {
  let user: TestUser;
  before(async () => {
    user = await newUser();
  });

  async function refusal(body: string): Promise<unknown> {
    const client = createTokenClient({
      baseUrl: "http://127.0.0.1:1",
      signer: { privateKey: user.secretKey },
      fetch: async () =>
        new Response(body, { status: 409, headers: { "content-type": "application/json" } }),
    });
    try {
      await client.createToken({ userId: user.userId, name: "n" });
    } catch (err) {
      return err;
    }
    assert.fail("the create was not refused");
  }

  it("reads the ErrorInfo among the details", async () => {
    const other = { "@type": "type.googleapis.com/google.rpc.DebugInfo", detail: "x" };
    alreadyCreated("rest")(await refusal(restBody([other, REST_DETAIL])));
  });

  it("a client with a fixed clock resends the identical signed request (the documented recovery)", async () => {
    const sent: string[] = [];
    const at = Date.now();
    const client = createTokenClient({
      baseUrl: "http://127.0.0.1:1",
      signer: { privateKey: user.secretKey },
      now: () => at,
      fetch: async (_input, init) => {
        sent.push(String(init?.body));
        return new Response(restBody([REST_DETAIL]), { status: 409 });
      },
    });
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        client.createToken({ userId: user.userId, name: "n" }),
        alreadyCreated("rest"),
      );
    }
    assert.equal(sent.length, 2);
    assert.equal(sent[0], sent[1]);
    assert.match(sent[0] ?? "", /"signature":"[0-9a-f]{128}"/);
  });

  it("is undefined without that exact detail", async () => {
    const bodies = [
      JSON.stringify({ code: Code.AlreadyExists, message: MESSAGE }),
      restBody([]),
      restBody([{ ...REST_DETAIL, "@type": "type.googleapis.com/google.rpc.DebugInfo" }]),
      restBody([{ ...REST_DETAIL, reason: "SOMETHING_ELSE" }]),
      restBody([{ ...REST_DETAIL, domain: "example.com" }]),
      restBody([{ ...REST_DETAIL, metadata: { tokenId: 42 } }]),
      restBody([{ ...REST_DETAIL, metadata: null }]),
      JSON.stringify({ code: Code.AlreadyExists, message: MESSAGE, details: REST_DETAIL }),
    ];
    for (const body of bodies) {
      const err = await refusal(body);
      assert.ok(err instanceof TokenApiError, String(err));
      assert.equal(err.code, Code.AlreadyExists);
      assert.equal(err.createdTokenId, undefined, body);
    }
  });
});

// A stand-in TokenService that answers every create as the service answers a
// replay, served by connect-node: the detail goes through the real Connect
// (JSON) and gRPC (grpc-status-details-bin) encodings and the SDK's decoding.
describe("TokenApiError.createdTokenId over the wire", () => {
  const handler = connectNodeAdapter({
    routes(router) {
      router.service(TokenService, {
        createToken() {
          throw replayError();
        },
        deleteToken() {
          throw new ConnectError("tokenId: no such token", Code.NotFound);
        },
      });
    },
  });
  const http1 = http.createServer(handler);
  const h2c = http2.createServer(handler);
  const urls: Record<"connect" | "grpc", string> = { connect: "", grpc: "" };
  let user: TestUser;

  before(async () => {
    user = await newUser();
    for (const [server, transport] of [
      [http1, "connect"],
      [h2c, "grpc"],
    ] as const) {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      urls[transport] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }
  });
  after(async () => {
    http1.closeAllConnections();
    await new Promise((resolve) => http1.close(resolve));
    await new Promise((resolve) => h2c.close(resolve));
  });

  for (const transport of ["connect", "grpc"] as const) {
    it(transport, async () => {
      const client = createTokenClient({
        baseUrl: urls[transport],
        transport,
        signer: { privateKey: user.secretKey },
      });
      try {
        await assert.rejects(
          client.createToken({ userId: user.userId, name: "n" }),
          alreadyCreated(transport),
        );
        // Other refusals carry no id.
        await assert.rejects(
          client.deleteToken({ userId: user.userId, tokenId: TOKEN_ID }),
          (err: unknown) => err instanceof TokenApiError && err.createdTokenId === undefined,
        );
      } finally {
        client.close();
      }
    });
  }
});
