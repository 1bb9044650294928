import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { unimplementedMessage } from "../../../../src/server/wire/grpc-answer.js";

describe("the UNIMPLEMENTED message of a gRPC method not served", () => {
  const served = new Set(["perps.token.v1.TokenService"]);

  it("names the method, or the service, as grpc-go does", () => {
    assert.equal(
      unimplementedMessage("/perps.token.v1.TokenService/Nope", served),
      "unknown method Nope for service perps.token.v1.TokenService",
    );
    assert.equal(
      unimplementedMessage("/perps.token.v1.UserKeyService/PutUserKey", served),
      "unknown service perps.token.v1.UserKeyService",
    );
    // A REST path has the shape too.
    assert.equal(unimplementedMessage("/user/tokens", served), "unknown service user");
  });

  it("never echoes what is not a protobuf method name: it could be a secret", () => {
    const token = `pt_${"A".repeat(86)}`;
    for (const path of [
      `/${token}/Method`,
      `/svc.S/${"a".repeat(128)}`,
      `/${"a".repeat(5000)}`,
      "/a/b/c",
      "/a b/c",
    ]) {
      assert.equal(unimplementedMessage(path, served), "malformed method name", path);
    }
  });
});
