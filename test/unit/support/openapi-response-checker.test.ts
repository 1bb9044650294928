import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createTokenApiOpenApiDocument } from "../../../scripts/openapi/token-api-document.js";
import {
  createOpenApiResponseChecker,
  type ReceivedResponse,
} from "../../support/openapi-response-checker.js";

const checker = createOpenApiResponseChecker(createTokenApiOpenApiDocument());
const json = new Headers({ "content-type": "application/json" });
const created = {
  expiresAt: "2026-11-21",
  id: "YAnc9iX83Ws3U0fLFuOMmw",
  token: `pt_${"A".repeat(80)}abcdef`,
};

function received(over: Partial<ReceivedResponse>): ReceivedResponse {
  return { method: "POST", path: "/user/tokens", status: 201, headers: json, text: "", ...over };
}

const status = (code: number) => JSON.stringify({ code, message: "m", details: [] });

describe("the OpenAPI response checker (used by the REST contract tests)", () => {
  it("accepts the documented answers", () => {
    checker.check(received({ text: JSON.stringify(created) }));
    checker.check(received({ method: "DELETE", status: 200, text: "{}" }));
    checker.check(received({ status: 400, text: status(3) }));
    checker.check(received({ method: "DELETE", status: 404, text: status(5) }));
    checker.check(
      received({
        status: 429,
        headers: new Headers({ "content-type": "application/json", "retry-after": "3" }),
        text: status(8),
      }),
    );
    // Under "default".
    checker.check(received({ status: 500, text: status(13) }));
    checker.check(received({ path: "/user/tokens?x=1", status: 415, text: status(3) }));
  });

  it("accepts a Status error for paths and methods the document does not have", () => {
    checker.check(received({ method: "GET", status: 405, text: status(12) }));
    checker.check(received({ path: "/nope", status: 404, text: status(5) }));
  });

  it("refuses what the document does not allow", () => {
    const refused: [string, Partial<ReceivedResponse>][] = [
      ["a 201 without token", { text: JSON.stringify({ ...created, token: undefined }) }],
      ["a bad date", { text: JSON.stringify({ ...created, expiresAt: "2026-02-30" }) }],
      ["a create answered 200", { status: 200, text: JSON.stringify(created) }],
      ["a 400 with another code", { status: 400, text: status(5) }],
      [
        "a 401 with a string code",
        { status: 401, text: '{"code":"16","message":"m","details":[]}' },
      ],
      ["an error without details", { status: 409, text: '{"code":6,"message":"m"}' }],
      ["a 429 without Retry-After", { status: 429, text: status(8) }],
      ["text/plain", { headers: new Headers({ "content-type": "text/plain" }), text: "{}" }],
      ["not JSON", { text: "{" }],
      ["an unknown path answering 200", { path: "/nope", status: 200, text: "{}" }],
      ["an unknown path without the Status shape", { path: "/nope", status: 404, text: "{}" }],
    ];
    for (const [why, over] of refused) {
      assert.throws(() => checker.check(received(over)), assert.AssertionError, why);
    }
  });
});
