import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { after, before, describe, it } from "node:test";
import { freePort, portsInUse } from "../../../src/process/ports.js";

describe("portsInUse", () => {
  let taken: Server;
  let port = 0;
  before(async () => {
    taken = createServer();
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
    const address = taken.address();
    port = typeof address === "object" && address !== null ? address.port : 0;
  });
  after(() => new Promise<void>((done) => taken.close(() => done())));

  it("names the listeners whose port something listens on, and only those", async () => {
    const free = await freePort();
    const busy = { variable: "PUBLIC_PORT", host: "127.0.0.1", port };
    assert.deepEqual(
      await portsInUse([busy, { variable: "INTERNAL_PORT", host: "127.0.0.1", port: free }]),
      [busy],
    );
  });

  it("port 0 is never in use; no listeners, nothing in use", async () => {
    assert.deepEqual(
      await portsInUse([{ variable: "PUBLIC_PORT", host: "127.0.0.1", port: 0 }]),
      [],
    );
    assert.deepEqual(await portsInUse([]), []);
  });

  it("leaves the port free after looking", async () => {
    const free = await freePort();
    const address = { variable: "INTERNAL_PORT", host: "127.0.0.1", port: free };
    assert.deepEqual(await portsInUse([address]), []);
    assert.deepEqual(await portsInUse([address]), [], "the probe closed its listen");
  });
});
