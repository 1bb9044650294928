import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus } from "@grpc/grpc-js";
import {
  type CreateTokenRequest,
  type DeleteTokenRequest,
  TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { tokenCallsOnEveryProtocol } from "../support/every-protocol.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import { restJson } from "../support/rest-json.js";
import { newUser, signedCreate, signedDelete } from "../support/signing.js";
import { createOperatorGrpcClient, operatorConnectInterceptor } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// The shape rules of the proto (buf.validate) hold alike on every protocol: a
// missing required field is INVALID_ARGUMENT / 400 naming it by its JSON name,
// every wrong field is named at once, and a present timestamp of 0 is a valid
// integer outside the time window: 401 "Signature expired".

type Create = Partial<Omit<CreateTokenRequest, "$typeName">>;
type Delete = Partial<Omit<DeleteTokenRequest, "$typeName">>;

/** The code and message of an answer, whatever the protocol. */
interface Refusal {
  code: Code;
  message: string;
  /** The HTTP status (REST only). */
  httpStatus?: number;
}

interface Protocol {
  readonly name: string;
  createToken(req: Create): Promise<Refusal>;
  deleteToken(req: Delete): Promise<Refusal>;
}

const SECRETLESS = { signature: "ab".repeat(64) };

function without<T extends object>(req: T, field: keyof T): T {
  const copy = { ...req };
  delete copy[field];
  return copy;
}

async function refusal(call: Promise<unknown>): Promise<Refusal> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ConnectError) {
      return { code: err.code, message: err.rawMessage };
    }
    // @grpc/grpc-js: gRPC status codes are Connect's codes; it decodes the
    // percent-encoded grpc-message with decodeURI, which leaves ":,;" encoded.
    if (
      isGrpcError(err, GrpcStatus.INVALID_ARGUMENT) ||
      isGrpcError(err, GrpcStatus.UNAUTHENTICATED)
    ) {
      return { code: err.code as number as Code, message: decodeURIComponent(err.details) };
    }
    throw err;
  }
  assert.fail("expected the call to be refused");
}

describe("request rules from the proto, on REST, Connect, gRPC and gRPC-Web", () => {
  let redis: TestRedis;
  let service: TestService;
  let grpc: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;
  let grpcKeys: ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>;
  const protocols: Protocol[] = [];

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({
      redis: redis.topology,
      tokenMaxLifetimeSeconds: 31_536_000,
    });
    grpc = createGrpcClient(TokenService, service.publicAddress);
    grpcKeys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    const rest = async (method: string, req: object): Promise<Refusal> => {
      const res = await fetch(`${service.publicUrl}/user/tokens`, {
        method,
        headers: { "content-type": "application/json" },
        body: restJson(req),
      });
      const body = (await res.json()) as { code: Code; message: string };
      return { code: body.code, message: body.message, httpStatus: res.status };
    };
    protocols.push(...tokenCallsOnEveryProtocol(service.publicUrl, grpc, rest, refusal));
  });

  after(async () => {
    grpc.close();
    grpcKeys.close();
    await service.stop();
    await redis.dispose();
  });

  function assertInvalid(protocol: Protocol, answer: Refusal, message: string): void {
    assert.deepEqual(
      { code: answer.code, message: answer.message, httpStatus: answer.httpStatus },
      {
        code: Code.InvalidArgument,
        message,
        httpStatus: protocol.name === "REST" ? 400 : undefined,
      },
      protocol.name,
    );
  }

  for (const field of ["signature", "timestamp", "userId"] as const) {
    it(`create without ${field} → INVALID_ARGUMENT / 400 "${field}: is required"`, async () => {
      const req = await signedCreate(await newUser());
      for (const protocol of protocols) {
        assertInvalid(
          protocol,
          await protocol.createToken(without(req, field)),
          `${field}: is required`,
        );
      }
    });
  }

  for (const field of ["signature", "timestamp", "tokenId", "userId"] as const) {
    it(`delete without ${field} → INVALID_ARGUMENT / 400 "${field}: is required"`, async () => {
      const req = await signedDelete(await newUser(), "abc");
      for (const protocol of protocols) {
        assertInvalid(
          protocol,
          await protocol.deleteToken(without(req, field)),
          `${field}: is required`,
        );
      }
    });
  }

  it("a lone surrogate never reaches the service: REST and Connect JSON refuse it as INVALID_ARGUMENT", async () => {
    // Sent as JSON text with the surrogate escaped (\ud800), as a client may: a
    // client that encodes UTF-8 itself (binary protobuf, connect-web) cannot
    // send one at all, it turns into U+FFFD.
    const user = await newUser();
    for (const name of ["a\uD800b", "\uDC00"]) {
      const body = restJson(await signedCreate(user, { name }));
      assert.ok(body.includes("\\ud8") || body.includes("\\udc"), body);
      const viaRest = await fetch(`${service.publicUrl}/user/tokens`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      assert.equal(viaRest.status, 400);
      assert.deepEqual(await viaRest.json(), {
        code: Code.InvalidArgument,
        message: "name: must not contain unpaired surrogates",
        details: [],
      });
      const viaConnect = await fetch(
        `${service.publicUrl}/perps.token.v1.TokenService/CreateToken`,
        { method: "POST", headers: { "content-type": "application/json" }, body },
      );
      assert.equal(viaConnect.status, 400);
      assert.equal(((await viaConnect.json()) as { code: string }).code, "invalid_argument");
    }
  });

  it("an empty request names every missing field at once", async () => {
    for (const protocol of protocols) {
      assertInvalid(
        protocol,
        await protocol.createToken({}),
        "signature: is required; timestamp: is required; userId: is required",
      );
      assertInvalid(
        protocol,
        await protocol.deleteToken({}),
        "signature: is required; timestamp: is required; tokenId: is required; userId: is required",
      );
    }
  });

  it("every wrong field at once, missing and malformed alike, in field order", async () => {
    for (const protocol of protocols) {
      assertInvalid(
        protocol,
        await protocol.createToken({
          signature: "0x12",
          userId: "user-1",
          expiresIn: 0n,
          name: "",
        }),
        [
          "signature: must be exactly 128 lowercase hex characters, without 0x prefix",
          "timestamp: is required",
          "userId: must be a UUID (version 1-8, variant 8, 9, a or b; or the nil or all-f UUID)",
          "expiresIn: must be greater than 0",
          "name: must be 1 to 128 characters",
        ].join("; "),
      );
    }
  });

  it("a present timestamp of 0 is a valid integer outside the window: 401 Signature expired", async () => {
    const user = await newUser();
    await grpcKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    const create = await signedCreate(user, { timestamp: 0n });
    const remove = await signedDelete(user, "abc", { timestamp: 0n });
    for (const protocol of protocols) {
      for (const answer of [
        await protocol.createToken(create),
        await protocol.deleteToken(remove),
      ]) {
        assert.deepEqual(
          { code: answer.code, message: answer.message, httpStatus: answer.httpStatus },
          {
            code: Code.Unauthenticated,
            message: "Signature expired",
            httpStatus: protocol.name === "REST" ? 401 : undefined,
          },
          protocol.name,
        );
      }
    }
  });

  it("shape is checked before the time window, whatever the protocol", async () => {
    for (const protocol of protocols) {
      assertInvalid(
        protocol,
        await protocol.createToken({ ...SECRETLESS, timestamp: 0n }),
        "userId: is required",
      );
    }
  });

  it("UserKeyService (internal): the proto's rules too, fields named by JSON name", async () => {
    const connect = createClient(
      UserKeyService,
      createConnectTransport({
        baseUrl: service.internalUrl,
        httpVersion: "1.1",
        interceptors: [operatorConnectInterceptor()],
      }),
    );
    for (const [req, message] of [
      [{}, "userId: is required; publicKey: is required"],
      [
        { userId: "x", publicKey: "AB".repeat(32) },
        "userId: must be a UUID (version 1-8, variant 8, 9, a or b; or the nil or all-f UUID); publicKey: must be 64 lowercase hex characters (32 bytes)",
      ],
    ] as const) {
      for (const call of [
        refusal(connect.putUserKey(req)),
        refusal(connect.deleteUserKey(req)),
        refusal(grpcKeys.putUserKey(req)),
        refusal(grpcKeys.deleteUserKey(req)),
      ]) {
        assert.deepEqual(await call, { code: Code.InvalidArgument, message });
      }
    }
  });
});
