import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  IN_USE_EXIT_CODE,
  InUseError,
  inUseLine,
  listenerInUse,
} from "../../../src/process/ports.js";

const PUBLIC = { variable: "PUBLIC_PORT", host: "127.0.0.1", port: 8080 };
const INTERNAL = { variable: "INTERNAL_PORT", host: "127.0.0.1", port: 9090 };

describe("inUseLine", () => {
  it("says what is in use, by whom when known, and which variables choose another", () => {
    assert.equal(
      inUseLine({ ports: [PUBLIC] }),
      "Cannot start: port 8080 of 127.0.0.1 (PUBLIC_PORT) is in use. Stop the other instance, or choose another with PUBLIC_PORT.",
    );
    assert.equal(
      inUseLine({ ports: [PUBLIC, INTERNAL], folder: { dir: "/srv/data", ownerPid: 41 } }),
      "Cannot start: port 8080 of 127.0.0.1 (PUBLIC_PORT) is in use; port 9090 of 127.0.0.1 (INTERNAL_PORT) is in use; the data folder /srv/data (EMBEDDED_REDIS_DIR) is in use by the service with pid 41. Stop the other instance, or choose another with PUBLIC_PORT, INTERNAL_PORT, EMBEDDED_REDIS_DIR.",
    );
    assert.equal(
      inUseLine({ ports: [], folder: { dir: "/d", ownerPid: undefined } }),
      "Cannot start: the data folder /d (EMBEDDED_REDIS_DIR) is in use by another service process. Stop the other instance, or choose another with EMBEDDED_REDIS_DIR.",
    );
  });

  it("is what an InUseError carries; the exit code is not a configuration error's", () => {
    const err = new InUseError(inUseLine({ ports: [INTERNAL] }));
    assert.equal(err.name, "InUseError");
    assert.match(err.message, /^Cannot start: port 9090/);
    assert.equal(IN_USE_EXIT_CODE, 3);
  });
});

describe("listenerInUse", () => {
  const inUse = (port?: number, address?: string) =>
    Object.assign(new Error("listen EADDRINUSE"), { code: "EADDRINUSE", port, address });

  it("the listener an EADDRINUSE is about, by its port", () => {
    assert.equal(listenerInUse(inUse(9090, "127.0.0.1"), [PUBLIC, INTERNAL]), INTERNAL);
  });

  it("a port the listeners do not name (one chosen as 0): both variables, the error's address", () => {
    assert.deepEqual(listenerInUse(inUse(40000, "::1"), [{ ...PUBLIC, port: 0 }, INTERNAL]), {
      variable: "PUBLIC_PORT or INTERNAL_PORT",
      host: "::1",
      port: 40000,
    });
    assert.deepEqual(listenerInUse(inUse(), [PUBLIC]), {
      variable: "PUBLIC_PORT or INTERNAL_PORT",
      host: "its address",
      port: 0,
    });
  });

  it("undefined for any other failure", () => {
    for (const err of [
      Object.assign(new Error("x"), { code: "EACCES", port: 80 }),
      new Error("plain"),
      null,
      "EADDRINUSE",
      undefined,
    ]) {
      assert.equal(listenerInUse(err, [PUBLIC]), undefined, String(err));
    }
  });
});
