import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { rpcProtocol } from "../../../src/server/call-protocol.js";

describe("the protocol of a request to a Connect path", () => {
  it("is told by the content type, in any case", () => {
    for (const [contentType, protocol] of [
      ["application/grpc", "grpc"],
      ["application/grpc+proto", "grpc"],
      ["Application/GRPC+JSON", "grpc"],
      ["application/grpc-web", "grpc-web"],
      ["application/grpc-web-text+proto", "grpc-web"],
      ["APPLICATION/GRPC-WEB+PROTO", "grpc-web"],
      ["application/proto", "connect"],
      ["application/json; charset=utf-8", "connect"],
      ["application/connect+proto", "connect"],
    ] as const) {
      assert.equal(rpcProtocol(contentType), protocol, contentType);
    }
  });

  it("is connect when there is no content type", () => {
    assert.equal(rpcProtocol(undefined), "connect");
    assert.equal(rpcProtocol(null), "connect");
    assert.equal(rpcProtocol(""), "connect");
  });
});
