import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { readBufImage } from "../../../../scripts/openapi/buf-image.js";
import { createOpenApiDocument } from "../../../../scripts/openapi/create-openapi-document.js";
import {
  commentsFromRegistry,
  sourceInfoComments,
} from "../../../../scripts/openapi/proto-comments.js";
import { GatewayTestService } from "../../../gen/perps/gatewaytest/v1/gateway_test_pb.js";

describe("proto comments as descriptions", () => {
  const image = readBufImage({ paths: ["proto/perps", "test/proto/perps"] });
  const comments = commentsFromRegistry(image);

  it("generated code embeds no source info, so its descriptors have no comments", () => {
    assert.equal(sourceInfoComments(TokenService), undefined);
    assert.equal(sourceInfoComments(TokenService.method.createToken), undefined);
  });

  it("reads them from a buf image for the embedded descriptors", () => {
    assert.match(comments(TokenService) ?? "", /^Creates, deletes and lists bearer API tokens/);
    assert.match(comments(TokenService.method.createToken) ?? "", /^Creates a bearer token\./);
    const request = TokenService.method.createToken.input;
    assert.equal(comments(request), undefined, "the message has no comment");
    const timestamp = request.fields.find((f) => f.name === "timestamp");
    assert.ok(timestamp !== undefined);
    assert.equal(
      comments(timestamp),
      "Unix time in milliseconds; must be within 2 minutes of server time.",
    );
  });

  it("joins a comment's lines without the space after //", () => {
    const text = comments(TokenService.method.createToken) ?? "";
    assert.equal(
      text,
      'Creates a bearer token. Signed message:\n"createToken:<timestamp>:<expires_in>:<name>:<user_id>", with an empty\nslot for each omitted optional field; with scopes or allowed_ips,\n":<scopes>:<allowed_ips>" follows, each list joined by "," in the order\nsent, an absent one as an empty slot.',
    );
  });

  it("reads enum and enum value comments, and puts all of them in the document", () => {
    const doc = createOpenApiDocument({ services: [GatewayTestService], comments });
    const color = doc.components.schemas["perps.gatewaytest.v1.Color-input"];
    assert.equal(color?.description, "Example enum for enum binding.");
    assert.deepEqual(doc.tags?.[0]?.name, "perps.gatewaytest.v1.GatewayTestService");
    assert.match(doc.tags?.[0]?.description ?? "", /^Test-only service for the REST gateway/);
    assert.match(doc.info.description ?? "", /^Test-only service/);
    const echo = doc.components.schemas["perps.gatewaytest.v1.EchoResponse"];
    assert.equal(echo?.properties?.rpc?.description, "Name of the method that served the call.");
    const getItem = doc.paths["/v1/shelves/{shelf}/items/{item.id}"]?.get;
    assert.match(getItem?.description ?? "", /^Path variables, one of them nested/);
  });
});
