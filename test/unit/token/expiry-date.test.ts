import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expiresAtMs, utcDate } from "../../../src/token/expiry-date.js";

describe("expiry date", () => {
  it("is the UTC calendar date of now + expiresIn", () => {
    const now = Date.UTC(2024, 1, 28, 23, 59, 59);
    assert.equal(utcDate(expiresAtMs(now, 1)), "2024-02-29"); // leap day
    assert.equal(utcDate(expiresAtMs(now, 86_401)), "2024-03-01");
    assert.equal(utcDate(expiresAtMs(Date.UTC(2023, 1, 28, 23, 59, 59), 1)), "2023-03-01");
    assert.equal(utcDate(expiresAtMs(Date.UTC(2026, 11, 31, 12), 604_800)), "2027-01-07");
  });
});
