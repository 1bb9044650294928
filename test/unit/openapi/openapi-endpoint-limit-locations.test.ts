import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  fillLimits,
  LIMIT_LOCATIONS_FILE,
  LIMIT_NAMES,
  loadLimitLocations,
} from "../../../src/openapi/openapi-endpoint.js";
import { DEFAULT_SERVICE_LIMITS } from "../../../src/openapi/service-limits.js";

describe("LIMIT_NAMES", () => {
  it("names every limit of ServiceLimits", () => {
    assert.deepEqual([...LIMIT_NAMES].sort(), Object.keys(DEFAULT_SERVICE_LIMITS).sort());
  });
});

describe("loading openapi-limits.json", () => {
  const dir = mkdtempSync(join(tmpdir(), "limit-locations-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };

  it("refuses a file that is not a list of locations", () => {
    for (const [name, value] of [
      ["no-list.json", { $comment: "x" }],
      ["unknown-limit.json", { locations: [{ pointer: "/a", number: "maxWorkers" }] }],
      ["no-pointer.json", { locations: [{ text: "{maxActivePerUser}" }] }],
      ["relative-pointer.json", { locations: [{ pointer: "a", text: "x" }] }],
      ["number-text.json", { locations: [{ pointer: "/a", text: 5 }] }],
    ] as const) {
      assert.throws(
        () => loadLimitLocations(file(name, value)),
        /is not a list of limit locations/,
      );
    }
  });

  it("fails on a missing file", () => {
    assert.throws(() => loadLimitLocations(join(dir, "missing.json")), { code: "ENOENT" });
  });

  it("reads one that is", () => {
    const locations = [
      { pointer: "/a~1b", number: "rateLimitPerMinute" },
      { pointer: "/c/0", text: "{maxLifetimeSeconds} s" },
    ];
    assert.deepEqual(loadLimitLocations(file("good.json", { locations })), locations);
  });

  it("reads the committed openapi-limits.json by default, where every limit appears", () => {
    assert.ok(LIMIT_LOCATIONS_FILE.pathname.endsWith("/openapi-limits.json"));
    const locations = loadLimitLocations();
    for (const name of LIMIT_NAMES) {
      assert.ok(
        locations.some((l) => ("number" in l ? l.number === name : l.text.includes(`{${name}}`))),
        name,
      );
    }
  });
});

describe("fillLimits", () => {
  const limits = { maxLifetimeSeconds: 3600, rateLimitPerMinute: 5, maxActivePerUser: 7 };

  it("replaces each {limit} by its value, every time it appears", () => {
    assert.equal(
      fillLimits(
        "{rateLimitPerMinute} a minute, {maxActivePerUser} live; {rateLimitPerMinute}",
        limits,
      ),
      "5 a minute, 7 live; 5",
    );
    assert.equal(fillLimits("up to {maxLifetimeSeconds} s", limits), "up to 3600 s");
  });

  it("leaves other braces as they are", () => {
    assert.equal(
      fillLimits("{name} of {userId}, {maxWorkers}, { rateLimitPerMinute }, {}", limits),
      "{name} of {userId}, {maxWorkers}, { rateLimitPerMinute }, {}",
    );
  });
});
