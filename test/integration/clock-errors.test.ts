import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { status as GrpcStatus } from "@grpc/grpc-js";
import {
  ErrorInfoSchema,
  LocalizedMessageSchema,
} from "@perps/token-client/contract/google/rpc/error_details_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { tokenCallsOnEveryProtocol } from "../support/every-protocol.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import { grpcStatusDetails } from "../support/grpc-status-details.js";
import { restJson } from "../support/rest-json.js";
import { newUser, signedCreate, signedDelete, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// A timestamp outside the window says, on every protocol, which way the
// caller's clock is off and by how much, and carries the server's time: an
// ErrorInfo for programs, a LocalizedMessage for people. The message itself
// stays the contract's "Signature expired".

/** What a clock refusal carries, whatever the protocol. */
interface ClockRefusal {
  code: number;
  message: string;
  httpStatus?: number;
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
  text?: string;
}

interface Protocol {
  readonly name: string;
  createToken(req: Awaited<ReturnType<typeof signedCreate>>): Promise<ClockRefusal>;
  deleteToken(req: Awaited<ReturnType<typeof signedDelete>>): Promise<ClockRefusal>;
}

function fromConnectError(err: ConnectError): ClockRefusal {
  const [info] = err.findDetails(ErrorInfoSchema);
  const [text] = err.findDetails(LocalizedMessageSchema);
  return {
    code: err.code,
    message: err.rawMessage,
    reason: info?.reason,
    domain: info?.domain,
    metadata: info?.metadata,
    text: text?.message,
  };
}

async function refusal(call: Promise<unknown>): Promise<ClockRefusal> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ConnectError) {
      return fromConnectError(err);
    }
    if (isGrpcError(err, GrpcStatus.UNAUTHENTICATED)) {
      const status = grpcStatusDetails(err);
      const info = status.details
        .map((any) => anyUnpack(any, ErrorInfoSchema))
        .find((d) => d !== undefined);
      const text = status.details
        .map((any) => anyUnpack(any, LocalizedMessageSchema))
        .find((d) => d !== undefined);
      return {
        code: err.code,
        message: decodeURIComponent(err.details),
        reason: info?.reason,
        domain: info?.domain,
        metadata: info?.metadata,
        text: text?.message,
      };
    }
    throw err;
  }
  assert.fail("expected the call to be refused");
}

interface RestBody {
  code: number;
  message: string;
  details: Record<string, unknown>[];
}

function restRefusal(status: number, body: RestBody): ClockRefusal {
  const info = body.details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo");
  const text = body.details.find(
    (d) => d["@type"] === "type.googleapis.com/google.rpc.LocalizedMessage",
  );
  return {
    code: body.code,
    message: body.message,
    httpStatus: status,
    reason: info?.reason as string | undefined,
    domain: info?.domain as string | undefined,
    metadata: info?.metadata as Record<string, string> | undefined,
    text: text?.message as string | undefined,
  };
}

describe("clock errors on REST, Connect, gRPC and gRPC-Web", () => {
  let redis: TestRedis;
  let service: TestService;
  let user: TestUser;
  let grpc: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;
  const protocols: Protocol[] = [];

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({ redis: redis.topology });
    grpc = createGrpcClient(TokenService, service.publicAddress);
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    user = await newUser();
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    keys.close();
    const rest = async (method: string, req: object): Promise<ClockRefusal> => {
      const res = await fetch(`${service.publicUrl}/user/tokens`, {
        method,
        headers: { "content-type": "application/json" },
        body: restJson(req),
      });
      return restRefusal(res.status, (await res.json()) as RestBody);
    };
    protocols.push(...tokenCallsOnEveryProtocol(service.publicUrl, grpc, rest, refusal));
  });

  after(async () => {
    grpc.close();
    await service.stop();
    await redis.dispose();
  });

  /**
   * The refusal of a call signed `offsetMs` off the clock, checked against
   * the time it was made; `said` is how its sentence puts the offset.
   */
  async function assertClockRefusal(
    protocol: Protocol,
    operation: "createToken" | "deleteToken",
    offsetMs: number,
    said: string,
  ): Promise<void> {
    const label = `${protocol.name} ${operation} ${offsetMs} ms`;
    const timestamp = BigInt(Date.now() + offsetMs);
    const before = Date.now();
    const answer =
      operation === "createToken"
        ? await protocol.createToken(await signedCreate(user, { timestamp }))
        : await protocol.deleteToken(await signedDelete(user, "abc", { timestamp }));
    const afterCall = Date.now();
    const clock = offsetMs > 0 ? "ahead" : "behind";
    assert.deepEqual(
      {
        code: answer.code,
        message: answer.message,
        httpStatus: answer.httpStatus,
        reason: answer.reason,
        domain: answer.domain,
        clock: answer.metadata?.clock,
        toleranceMs: answer.metadata?.toleranceMs,
      },
      {
        code: 16,
        message: "Signature expired",
        httpStatus: protocol.name === "REST" ? 401 : undefined,
        reason: "TIMESTAMP_OUTSIDE_WINDOW",
        domain: "perps-tokens",
        clock,
        toleranceMs: "120000",
      },
      label,
    );
    // The server time is the one the service compared with, taken during the call.
    const serverTimeMs = Number(answer.metadata?.serverTimeMs);
    assert.ok(serverTimeMs >= before && serverTimeMs <= afterCall, `${label}: ${serverTimeMs}`);
    assert.equal(answer.metadata?.offsetMs, String(timestamp - BigInt(serverTimeMs)), label);
    assert.equal(
      answer.text,
      `Signature expired: the timestamp is ${said} server time (${new Date(serverTimeMs).toISOString()}); within ±2.0 min is accepted`,
      label,
    );
  }

  it("a timestamp 3 minutes ahead: the details say ahead by 3.0 min, with the server time", async () => {
    for (const protocol of protocols) {
      await assertClockRefusal(protocol, "createToken", 180_000, "3.0 min ahead of");
      await assertClockRefusal(protocol, "deleteToken", 180_000, "3.0 min ahead of");
    }
  });

  it("a timestamp 10 minutes behind: the details say behind by 10.0 min", async () => {
    for (const protocol of protocols) {
      await assertClockRefusal(protocol, "createToken", -600_000, "10.0 min behind");
      await assertClockRefusal(protocol, "deleteToken", -600_000, "10.0 min behind");
    }
  });

  it("a timestamp inside the window is not refused for its clock", async () => {
    const res = await fetch(`${service.publicUrl}/user/tokens`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: restJson(await signedCreate(user, { timestamp: BigInt(Date.now() + 100_000) })),
    });
    assert.equal(res.status, 201, await res.text());
  });
});
