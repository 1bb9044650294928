import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readyLine } from "../../../src/process/ports.js";

const base = {
  host: "127.0.0.1",
  internalHost: "127.0.0.1",
  publicPort: 8080,
  internalPort: 9090,
  tls: false,
  console: true,
  workers: 2,
};

describe("readyLine", () => {
  it("names the console and both listeners", () => {
    assert.equal(
      readyLine(base),
      "perps-token-service ready (2 workers): console http://127.0.0.1:8080/, public API http://127.0.0.1:8080, internal http://127.0.0.1:9090 (key registration, introspection, /auth, /metrics)",
    );
  });

  it("TLS, one process, no console, wildcard and IPv6 binds", () => {
    assert.equal(
      readyLine({
        ...base,
        tls: true,
        console: false,
        workers: 1,
        host: "0.0.0.0",
        internalHost: "::1",
      }),
      "perps-token-service ready (1 process): public API https://127.0.0.1:8080, internal https://[::1]:9090 (key registration, introspection, /auth, /metrics)",
    );
    assert.match(readyLine({ ...base, host: "::" }), /public API http:\/\/\[::1\]:8080/);
  });
});
