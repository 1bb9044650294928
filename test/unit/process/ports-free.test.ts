import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { freePort, freePorts } from "../../../src/process/ports.js";

/** Listens on `port` of 127.0.0.1 and closes again; rejects when it cannot. */
function listenOnce(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => server.close(() => resolve()));
  });
}

describe("freePorts and freePort", () => {
  it("give distinct ports that were free, and are let go again", async () => {
    const ports = await freePorts(4);
    assert.equal(ports.length, 4);
    assert.equal(new Set(ports).size, 4);
    for (const port of ports) {
      assert.ok(port > 0 && port < 65536, String(port));
      await listenOnce(port);
    }
    const one = await freePort();
    assert.ok(one > 0);
    await listenOnce(one);
    assert.deepEqual(await freePorts(0), []);
  });
});
