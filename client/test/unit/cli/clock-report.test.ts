import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { reportError } from "../../../src/cli/report-error.js";
import { TokenApiError } from "../../../src/sdk/token-api-error.js";

function reported(err: unknown, json: boolean): string {
  let out = "";
  reportError(err, { stdout: () => {}, stderr: (t) => (out += t), env: {} }, json);
  return out;
}

const expired = (clockOffsetMs: number) =>
  new TokenApiError(Code.Unauthenticated, "Signature expired", {
    httpStatus: 401,
    clockOffsetMs,
    serverTimeMs: 1_700_000_000_000,
  });

describe("the CLI on Signature expired", () => {
  it("says which way this machine's clock is off, by how much, and the service's time", () => {
    assert.equal(
      reported(expired(180_000), false),
      "perps-tokens: UNAUTHENTICATED (HTTP 401): Signature expired\n" +
        "This machine's clock is 3.0 min ahead of the service's (2023-11-14T22:13:20.000Z): set it right and try again.\n",
    );
    assert.match(reported(expired(-7_200_000), false), /clock is 2\.0 h behind the service's/);
  });

  it("--json carries the offset and the server time", () => {
    const line = JSON.parse(reported(expired(-600_000), true)) as { error: object };
    assert.deepEqual(line.error, {
      kind: "service",
      code: 16,
      codeName: "UNAUTHENTICATED",
      message: "Signature expired",
      httpStatus: 401,
      clockOffsetMs: -600_000,
      serverTimeMs: 1_700_000_000_000,
    });
  });
});
