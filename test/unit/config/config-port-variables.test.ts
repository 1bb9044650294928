import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, deprecationNotice, parseConfig } from "../../../src/config/config.js";

// PUBLIC_PORT and INTERNAL_PORT replaced HTTP_PORT and GRPC_PORT; the old
// names are read, with a notice, until the next minor release.
describe("PUBLIC_PORT and INTERNAL_PORT", () => {
  it("set the listeners' ports, with no notice", () => {
    const config = parseConfig({ PUBLIC_PORT: "8081", INTERNAL_PORT: "9091" });
    assert.equal(config.publicPort, 8081);
    assert.equal(config.internalPort, 9091);
    assert.deepEqual(config.oldNames, []);
  });

  it("are still read by their old names, HTTP_PORT and GRPC_PORT, which the notice names", () => {
    const config = parseConfig({ HTTP_PORT: "8081", GRPC_PORT: "9091" });
    assert.equal(config.publicPort, 8081);
    assert.equal(config.internalPort, 9091);
    assert.deepEqual(
      config.oldNames.map((v) => [v.old, v.name]),
      [
        ["HTTP_PORT", "PUBLIC_PORT"],
        ["GRPC_PORT", "INTERNAL_PORT"],
      ],
    );
    assert.equal(
      deprecationNotice(config.oldNames),
      "HTTP_PORT is deprecated, use PUBLIC_PORT; GRPC_PORT is deprecated, use INTERNAL_PORT (the old names are removed in the next minor release)",
    );
    const one = parseConfig({ PUBLIC_PORT: "8081", GRPC_PORT: "9091" });
    assert.equal(one.internalPort, 9091);
    assert.equal(
      deprecationNotice(one.oldNames),
      "GRPC_PORT is deprecated, use INTERNAL_PORT (the old names are removed in the next minor release)",
    );
  });

  it("take an old name set to the same value, and still name it in the notice", () => {
    const config = parseConfig({ PUBLIC_PORT: "8081", HTTP_PORT: "8081" });
    assert.equal(config.publicPort, 8081);
    assert.deepEqual(
      config.oldNames.map((v) => v.old),
      ["HTTP_PORT"],
    );
  });

  it("refuse old and new names set to different values, every such pair at once", () => {
    assert.throws(
      () =>
        parseConfig({
          PUBLIC_PORT: "8081",
          HTTP_PORT: "8080",
          INTERNAL_PORT: "9091",
          GRPC_PORT: "9090",
          LOG_LEVEL: "loud",
        }),
      (err) =>
        err instanceof ConfigError &&
        err.problems.length === 3 &&
        err.problems[0] ===
          'PUBLIC_PORT and HTTP_PORT (its deprecated name) are both set, to "8081" and "8080": set only PUBLIC_PORT' &&
        err.problems[1] ===
          'INTERNAL_PORT and GRPC_PORT (its deprecated name) are both set, to "9091" and "9090": set only INTERNAL_PORT' &&
        err.problems[2]?.startsWith("LOG_LEVEL must be one of") === true,
    );
  });

  it("name the variable that was read when its value is bad", () => {
    assert.throws(
      () => parseConfig({ GRPC_PORT: "ninety" }),
      (err) => err instanceof ConfigError && /^GRPC_PORT must be an integer/.test(err.message),
    );
  });
});
