import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../../../src/config/config-error.js";

describe("ConfigError", () => {
  it("one problem: its message, as the one problem", () => {
    const err = new ConfigError('PUBLIC_PORT must be an integer from 0 to 65535, got "x"');
    assert.ok(err instanceof Error);
    assert.equal(err.name, "ConfigError");
    assert.equal(err.message, 'PUBLIC_PORT must be an integer from 0 to 65535, got "x"');
    assert.deepEqual(err.problems, [err.message]);
  });

  it("several problems: each kept, the message one per line", () => {
    const err = new ConfigError(["HOST is empty", 'REDIS_TLS must be true or false, got "y"']);
    assert.deepEqual(err.problems, ["HOST is empty", 'REDIS_TLS must be true or false, got "y"']);
    assert.equal(err.message, 'HOST is empty\nREDIS_TLS must be true or false, got "y"');
  });
});
