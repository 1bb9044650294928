import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkRequiredFields, requiredFields } from "../../../src/gateway/required-fields.js";
import { RestError } from "../../../src/gateway/rest-error.js";
import { restRoutesOfService } from "../../../src/gateway/rest-route.js";
import { TokenService } from "../../../src/gen/perps/token/v1/token_pb.js";

const [create, remove] = restRoutesOfService(TokenService);

describe("required fields (google.api.field_behavior = REQUIRED)", () => {
  it("are read from the proto", () => {
    assert.ok(create !== undefined && remove !== undefined);
    assert.deepEqual(
      requiredFields(create.method.input).map((f) => f.jsonName),
      ["signature", "timestamp", "userId"],
    );
    assert.deepEqual(
      requiredFields(remove.method.input).map((f) => f.jsonName),
      ["signature", "timestamp", "tokenId", "userId"],
    );
  });

  it("a body with every required field passes, optional ones may be left out", () => {
    assert.ok(create !== undefined);
    checkRequiredFields(create, { signature: "", timestamp: 0, userId: "" }, new URLSearchParams());
    // The proto name counts as well as the JSON name.
    checkRequiredFields(
      create,
      { signature: "", timestamp: 0, user_id: "" },
      new URLSearchParams(),
    );
  });

  for (const missing of ["signature", "timestamp", "userId"]) {
    it(`a body without ${missing} is refused, naming it`, () => {
      assert.ok(create !== undefined);
      const body: Record<string, string | number> = { signature: "", timestamp: 0, userId: "" };
      delete body[missing];
      assert.throws(
        () => checkRequiredFields(create, body, new URLSearchParams()),
        (err) =>
          err instanceof RestError &&
          err.httpStatus === 400 &&
          err.message === `${missing}: is required`,
      );
    });
  }

  it('with body "*" a query parameter does not stand in for a body field', () => {
    assert.ok(remove !== undefined);
    assert.throws(
      () =>
        checkRequiredFields(
          remove,
          { signature: "", timestamp: 0, userId: "" },
          new URLSearchParams("tokenId=x"),
        ),
      RestError,
    );
  });
});
