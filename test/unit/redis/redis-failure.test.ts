import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { Redis, ReplyError } from "ioredis";
import {
  isClusterRedirect,
  isNotConnected,
  isRedisUnreachable,
  isTransientRedisFailure,
} from "../../../src/redis/redis-failure.js";

describe("isTransientRedisFailure", () => {
  it("is true for failures that say nothing of the command: connections, timeouts, anything thrown", () => {
    assert.equal(isTransientRedisFailure(new Error("Command timed out")), true);
    assert.equal(isTransientRedisFailure(new Error("Connection is closed.")), true);
    assert.equal(
      isTransientRedisFailure(
        new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      ),
      true,
    );
    assert.equal(isTransientRedisFailure("not even an Error"), true);
    assert.equal(isTransientRedisFailure(undefined), true);
  });

  it("is true for the replies of a server that cannot take the command now", () => {
    for (const reply of [
      "OOM command not allowed when used memory > 'maxmemory'.",
      "LOADING Redis is loading the dataset in memory",
      "READONLY You can't write against a read only replica.",
      "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
      "CLUSTERDOWN The cluster is down",
      "TRYAGAIN Multiple keys request during rehashing of slot",
      "MOVED 3999 127.0.0.1:6381",
      "ASK 3999 127.0.0.1:6381",
      "NOSCRIPT No matching script. Please use EVAL.",
      "BUSY Redis is busy running a script.",
      "NOREPLICAS Not enough good replicas to write.",
      "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
    ]) {
      assert.equal(isTransientRedisFailure(new ReplyError(reply)), true, reply);
    }
  });

  it("is false for an error reply a retry would get again", () => {
    for (const reply of [
      "ERR unknown command 'NOPE', with args beginning with: ",
      "WRONGTYPE Operation against a key holding the wrong kind of value",
      "ERR Error running script (call to f_1234): @user_script:1: oops",
      "NOAUTH Authentication required.",
      // A transient word inside a message is not that reply.
      "ERR value is not an integer: MOVED",
      "MOVEDX 1",
    ]) {
      assert.equal(isTransientRedisFailure(new ReplyError(reply)), false, reply);
    }
  });

  it("tells a reply by its name, as ioredis reports one", () => {
    const reply = Object.assign(new Error("ERR wrong number of arguments"), { name: "ReplyError" });
    assert.equal(isTransientRedisFailure(reply), false);
  });
});

describe("isClusterRedirect", () => {
  it("is true for MOVED and ASK replies", () => {
    for (const reply of ["MOVED 3999 127.0.0.1:6381", "ASK 3999 127.0.0.1:6381"]) {
      assert.equal(isClusterRedirect(new ReplyError(reply)), true, reply);
    }
  });

  it("is false for other replies, for the same words not in a reply, and for anything else", () => {
    for (const err of [
      new ReplyError("CLUSTERDOWN The cluster is down"),
      new ReplyError("TRYAGAIN Multiple keys request during rehashing of slot"),
      new ReplyError("MOVEDX 1 a:1"),
      new Error("MOVED 3999 127.0.0.1:6381"),
      "MOVED 3999 127.0.0.1:6381",
      undefined,
    ]) {
      assert.equal(isClusterRedirect(err), false, String(err));
    }
  });
});

describe("isRedisUnreachable", () => {
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
  const reply = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });

  it("is true when Redis is not there to answer, or cannot: refused, timed out, loading, no sentinel", () => {
    for (const err of [
      withCode("connect ECONNREFUSED 127.0.0.1:6379", "ECONNREFUSED"),
      withCode("connect ETIMEDOUT", "ETIMEDOUT"),
      withCode("connect EHOSTUNREACH 10.0.0.9:6379", "EHOSTUNREACH"),
      new Error("Command timed out"),
      new Error("no answer within 1000 ms"),
      reply("LOADING Redis is loading the dataset in memory"),
      reply("MASTERDOWN Link with MASTER is down"),
      new Error("All sentinels are unreachable. Retrying from scratch after 100ms."),
    ]) {
      assert.equal(isRedisUnreachable(err), true, err.message);
    }
    // Through the store's error, which keeps Redis' as its cause.
    const wrapped = new Error("Token store unavailable", { cause: new Error("Command timed out") });
    assert.equal(isRedisUnreachable(wrapped), true);
  });

  it("is false for a connection that merely dropped, and for a refused command", () => {
    for (const err of [
      new Error("Connection is closed."),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      withCode("read ECONNRESET", "ECONNRESET"),
      reply("ERR unknown command"),
      reply("NOSCRIPT No matching script"),
    ]) {
      assert.equal(isRedisUnreachable(err), false, err.message);
    }
    assert.equal(isRedisUnreachable("ECONNREFUSED"), false, "not an error");
    assert.equal(isRedisUnreachable(undefined), false);
  });
});

/**
 * What ioredis fails a command with when its connection closes while the
 * command waits for its reply, with the service's `maxRetriesPerRequest: 0`:
 * a server on port 0 that drops the connection at the command's first byte.
 */
async function closedUnderCommand(): Promise<unknown> {
  const server = createServer((socket) => socket.once("data", () => socket.destroy()));
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const address = server.address();
  assert.ok(address !== null && typeof address === "object");
  const client = new Redis({
    host: "127.0.0.1",
    port: address.port,
    maxRetriesPerRequest: 0,
    enableReadyCheck: false,
    retryStrategy: () => 50,
  });
  try {
    return await client.get("k").then(
      () => assert.fail("the server never answers"),
      (err: unknown) => err,
    );
  } finally {
    client.disconnect();
    await new Promise((closed) => server.close(closed));
  }
}

describe("isNotConnected", () => {
  it("is true for a command refused because its connection is not open, through causes", () => {
    assert.equal(isNotConnected(new Error("Connection is closed.")), true);
    assert.equal(
      isNotConnected(
        new Error("Token store unavailable", {
          cause: new Error("Stream isn't writeable and enableOfflineQueue options is false"),
        }),
      ),
      true,
    );
  });

  it("is true for a command whose connection closed while it waited for its reply", async () => {
    const err = await closedUnderCommand();
    assert.ok(err instanceof Error && err.name === "MaxRetriesPerRequestError", String(err));
    assert.equal(isNotConnected(err), true);
    assert.equal(isNotConnected(new Error("Token store unavailable", { cause: err })), true);
    assert.equal(isRedisUnreachable(err), false);
  });

  it("is false for anything else: a refused connect, a timeout, a reply", () => {
    assert.equal(isNotConnected(new Error("connect ECONNREFUSED 127.0.0.1:6379")), false);
    assert.equal(isNotConnected(new Error("Command timed out")), false);
    assert.equal(isNotConnected(undefined), false);
  });
});
