import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { roundTripsPerRequest } from "../../../bench/redis-stats.js";

describe("roundTripsPerRequest", () => {
  const before = { evalsha: 10, get: 5, info: 3 };

  it("counts a script call as one round trip, whatever it runs inside", () => {
    const after = { evalsha: 110, get: 105, info: 4 };
    assert.deepEqual(roundTripsPerRequest(before, after, 100), {
      perRequest: 1,
      commands: { evalsha: 100, get: 100 },
    });
  });

  it("counts a GET the measured server sends itself when told so", () => {
    const after = { evalsha: 10, get: 205, info: 4 };
    assert.equal(roundTripsPerRequest(before, after, 100).perRequest, 0);
    assert.equal(roundTripsPerRequest(before, after, 100, new Set(["get"])).perRequest, 2);
  });

  it("counts the create and lookup scripts' EXISTS and PEXPIRETIME as theirs", () => {
    const after = { evalsha: 110, exists: 50, pexpiretime: 50, get: 55, info: 4 };
    assert.equal(roundTripsPerRequest(before, after, 100).perRequest, 1);
  });

  it("reads no requests as no round trips", () => {
    assert.equal(roundTripsPerRequest(before, { evalsha: 20 }, 0).perRequest, 0);
  });
});
