import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { file_google_api_annotations } from "@perps/token-client/contract/google/api/annotations_pb.js";
import { file_perps_token_v1_token } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { file_perps_gatewaytest_v1_gateway_test } from "../../gen/perps/gatewaytest/v1/gateway_test_pb.js";

// The contract's messages are generated once, in the client package, and the
// service imports them from there. Descriptors and registries are compared by
// identity (protovalidate, the REST gateway reading google.api.http, gRPC
// reflection): one copy of the generated code, and of @bufbuild/protobuf.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Where `@bufbuild/protobuf` resolves from the module or package.json at `from`. */
function protobufSeenFrom(from: string): string {
  return createRequire(from).resolve("@bufbuild/protobuf");
}

describe("one copy of the contract", () => {
  it("the service's src/gen holds only what no client needs: gRPC health and reflection, the stored record", () => {
    assert.deepEqual(readdirSync(`${ROOT}src/gen`).sort(), ["grpc", "health", "perps"]);
    assert.deepEqual(readdirSync(`${ROOT}src/gen/perps`), ["tokenstore"]);
  });

  it("the service, the client package and protovalidate load one @bufbuild/protobuf", () => {
    const service = protobufSeenFrom(`${ROOT}package.json`);
    const contract = createRequire(`${ROOT}package.json`).resolve(
      "@perps/token-client/contract/perps/token/v1/token_pb.js",
    );
    const protovalidate = createRequire(`${ROOT}package.json`).resolve("@bufbuild/protovalidate");
    assert.equal(protobufSeenFrom(`${ROOT}client/package.json`), service);
    assert.equal(protobufSeenFrom(contract), service);
    assert.equal(protobufSeenFrom(protovalidate), service);
  });

  it("the test-only gateway service builds on the very descriptors the service imports", () => {
    assert.ok(file_google_api_annotations.dependencies.length > 0);
    assert.ok(
      file_perps_gatewaytest_v1_gateway_test.dependencies.includes(file_google_api_annotations),
    );
    assert.ok(file_perps_token_v1_token.dependencies.includes(file_google_api_annotations));
  });
});
