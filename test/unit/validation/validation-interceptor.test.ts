import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type StreamRequest,
  type UnaryRequest,
} from "@connectrpc/connect";
import {
  CreateTokenRequestSchema,
  TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  type RequestValidator,
  validationInterceptor,
} from "../../../src/validation/validation-interceptor.js";

const good = {
  signature: "ab".repeat(64),
  timestamp: 1_700_000_000_000n,
  userId: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
};

describe("validationInterceptor", () => {
  const method = TokenService.method.createToken;
  function request(init: MessageInitShape<typeof CreateTokenRequestSchema>): UnaryRequest {
    return {
      stream: false,
      message: create(CreateTokenRequestSchema, init),
      method,
      service: TokenService,
      requestMethod: "POST",
      url: "http://localhost/perps.token.v1.TokenService/CreateToken",
      header: new Headers(),
      contextValues: createContextValues(),
      signal: new AbortController().signal,
    };
  }

  it("refuses an invalid request with INVALID_ARGUMENT before the next step runs", async () => {
    let reached = false;
    const next = validationInterceptor()(async () => {
      reached = true;
      throw new Error("not reached");
    });
    await assert.rejects(next(request({ userId: good.userId })), (err) => {
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, Code.InvalidArgument);
      assert.equal(err.rawMessage, "signature: is required; timestamp: is required");
      return true;
    });
    assert.equal(reached, false);
  });

  it("passes a valid request on", async () => {
    const answer = Symbol("answer");
    const next = validationInterceptor()(async () => answer as never);
    assert.equal(await next(request(good)), answer);
  });

  it("asks the validator it is given, and leaves streams to their implementations", async () => {
    const asked: string[] = [];
    const validator: RequestValidator = {
      problems: (schema) => {
        asked.push(schema.typeName);
        return ["a: is wrong", "b: is too"];
      },
    };
    const interceptor = validationInterceptor({ validator });
    await assert.rejects(
      interceptor(async () => {
        throw new Error("not reached");
      })(request(good)),
      (err: unknown) => err instanceof ConnectError && err.rawMessage === "a: is wrong; b: is too",
    );
    assert.deepEqual(asked, ["perps.token.v1.CreateTokenRequest"]);
    const answer = Symbol("answer");
    const stream = { ...request(good), stream: true } as unknown as StreamRequest;
    assert.equal(await interceptor(async () => answer as never)(stream), answer);
    assert.equal(asked.length, 1);
  });
});
