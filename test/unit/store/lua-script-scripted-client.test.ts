import assert from "node:assert/strict";
import { after, describe, it, mock } from "node:test";
import { Redis } from "ioredis";
import type { RedisClient } from "../../../src/redis/redis-client.js";
import { scriptedClient } from "../../../src/store/lua-script.js";

const SCRIPTS = [
  { command: "testOne", keys: ["a"], lua: "return 1" },
  { command: "testTwo", keys: ["a", "b"], lua: "return 2" },
];

describe("scriptedClient", () => {
  // Never connected: defining a command needs no server.
  const clients: Redis[] = [];
  const newClient = () => {
    const client = new Redis({ lazyConnect: true });
    clients.push(client);
    return { client, defined: mock.method(client, "defineCommand") };
  };
  after(() => {
    for (const client of clients) {
      client.disconnect();
    }
  });

  it("answers the holder's client with each script defined on it once, whatever the calls", () => {
    const { client, defined } = newClient();
    const redis = scriptedClient({ client }, SCRIPTS);
    assert.equal(redis(), client);
    assert.equal(redis(), client);
    assert.deepEqual(
      defined.mock.calls.map((call) => call.arguments),
      [
        ["testOne", { numberOfKeys: 1, lua: "return 1" }],
        ["testTwo", { numberOfKeys: 2, lua: "return 2" }],
      ],
    );
    assert.equal(typeof Reflect.get(client, "testTwo"), "function");
  });

  it("defines the scripts on a client that replaced the first, when it is first seen", () => {
    const first = newClient();
    const holder: { client: RedisClient } = { client: first.client };
    const redis = scriptedClient(holder, SCRIPTS);
    redis();
    const second = newClient();
    holder.client = second.client;
    assert.equal(second.defined.mock.callCount(), 0);
    assert.equal(redis(), second.client);
    assert.equal(second.defined.mock.callCount(), SCRIPTS.length);
    assert.equal(first.defined.mock.callCount(), SCRIPTS.length);
  });
});
