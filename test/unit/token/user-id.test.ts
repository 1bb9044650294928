import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { DeleteTokenRequestSchema } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { canonicalUserId } from "../../../src/token/user-id.js";
import { createRequestValidator } from "../../../src/validation/validation-interceptor.js";
import { isSpecUserId } from "../../support/spec-user-id.js";

const validator = createRequestValidator();

/** Whether the service's validator (the proto's rule) takes `userId` as a user id. */
function acceptedUserId(userId: string): boolean {
  const req = create(DeleteTokenRequestSchema, {
    userId,
    tokenId: "QVJLsoSPQbQRfow_",
    timestamp: 1n,
    signature: "a".repeat(128),
  });
  return !validator.problems(DeleteTokenRequestSchema, req).some((p) => p.startsWith("userId:"));
}

describe("userId: the validator (the proto's rule) and the spec's rule agree", () => {
  const valid = [
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
    "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
    "0B3C4D5E-1F2A-4B4C-BD9E-0123456789AB",
    ...[1, 2, 3, 4, 5, 6, 7, 8].map((v) => `0b3c4d5e-1f2a-${v}b4c-ad9e-0123456789ab`),
    ...["8", "9", "a", "b", "A", "B"].map((v) => `0b3c4d5e-1f2a-4b4c-${v}d9e-0123456789ab`),
  ];
  const invalid = [
    "",
    "0b3c4d5e-1f2a-0b4c-8d9e-0123456789ab",
    "0b3c4d5e-1f2a-9b4c-8d9e-0123456789ab",
    "0b3c4d5e-1f2a-fb4c-8d9e-0123456789ab",
    "0b3c4d5e-1f2a-4b4c-7d9e-0123456789ab",
    "0b3c4d5e-1f2a-4b4c-cd9e-0123456789ab",
    "0b3c4d5e1f2a4b4c8d9e0123456789ab",
    "{0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab}",
    "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab ",
    "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ag",
    "00000000-0000-0000-0000-00000000000",
    "ffffffff-ffff-ffff-ffff-fffffffffffe",
    "urn:uuid:0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
  ];
  for (const id of valid) {
    it(`accepts ${id}`, () => {
      assert.equal(acceptedUserId(id), true);
      assert.equal(isSpecUserId(id), true);
    });
  }
  for (const id of invalid) {
    it(`refuses ${JSON.stringify(id)}`, () => {
      assert.equal(acceptedUserId(id), false);
      assert.equal(isSpecUserId(id), false);
    });
  }
  it("stores users under the lowercase form", () => {
    assert.equal(
      canonicalUserId("0B3C4D5E-1F2A-4B4C-BD9E-0123456789AB"),
      "0b3c4d5e-1f2a-4b4c-bd9e-0123456789ab",
    );
  });
});
