import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createRedisRunner } from "../../../src/store/redis-runner.js";
import { StoreError } from "../../../src/store/store-error.js";

/** An error as ioredis reports an error reply of the server. */
function replyError(message: string): Error {
  return Object.assign(new Error(message), { name: "ReplyError" });
}

/** A createRedisRunner whose observer and tracer write down what they are told. */
function recorded(readDeadlineMs?: number) {
  const observed: { operation: string; seconds: number; failed: boolean }[] = [];
  const spans: { operation: string; failed?: boolean }[] = [];
  const call = createRedisRunner({
    observe: (operation, seconds, failed) => observed.push({ operation, seconds, failed }),
    trace: (operation) => {
      const span: { operation: string; failed?: boolean } = { operation };
      spans.push(span);
      return (failed) => {
        span.failed = failed;
      };
    },
    ...(readDeadlineMs === undefined ? {} : { readDeadlineMs }),
  });
  return { call, observed, spans };
}

describe("createRedisRunner", () => {
  it("answers what the operation answered, observed and traced as a success", async () => {
    const { call, observed, spans } = recorded();
    assert.equal(await call("token.lookup", async () => "value", "read"), "value");
    assert.equal(observed.length, 1);
    assert.equal(observed[0]?.operation, "token.lookup");
    assert.equal(observed[0]?.failed, false);
    assert.ok((observed[0]?.seconds ?? -1) >= 0);
    assert.deepEqual(spans, [{ operation: "token.lookup", failed: false }]);
  });

  for (const [name, err, kind] of [
    ["a lost connection", new Error("Connection is closed."), "unavailable"],
    ["a transient reply (a failover's READONLY)", replyError("READONLY replica"), "unavailable"],
    ["an error reply a retry would get again", replyError("ERR wrong arguments"), "rejected"],
  ] as const) {
    it(`${name}: a StoreError ${kind} carrying it, observed and traced as a failure`, async () => {
      const { call, observed, spans } = recorded();
      await assert.rejects(
        call("token.create", () => Promise.reject(err)),
        (thrown) => thrown instanceof StoreError && thrown.kind === kind && thrown.cause === err,
      );
      assert.deepEqual(
        observed.map((o) => [o.operation, o.failed]),
        [["token.create", true]],
      );
      assert.deepEqual(spans, [{ operation: "token.create", failed: true }]);
    });
  }

  it("a StoreError of the operation's own goes through as it is", async () => {
    const { call, observed } = recorded();
    const own = new StoreError("unconfirmed-write");
    await assert.rejects(
      call("token.create", () => Promise.reject(own)),
      (thrown) => thrown === own,
    );
    assert.equal(observed[0]?.failed, true);
  });

  it("a read with no answer by the deadline fails as unavailable", async () => {
    const { call, observed } = recorded(1);
    await assert.rejects(
      call("token.lookup", () => new Promise<never>(() => undefined), "read"),
      (thrown) =>
        thrown instanceof StoreError &&
        thrown.kind === "unavailable" &&
        thrown.cause instanceof Error &&
        thrown.cause.name === "ReadDeadlineError",
    );
    assert.equal(observed[0]?.failed, true);
  });

  it("a write is never cut by the read deadline: its undo must follow it", async () => {
    const { call } = recorded(1);
    const late = async () => {
      await sleep(20);
      return "written";
    };
    assert.equal(await call("token.create", late, "write"), "written");
    assert.equal(await call("token.create", late), "written");
  });

  it("a read that fails after its deadline is answered once, as the deadline", async () => {
    const { call, observed } = recorded(1);
    const failsLate = async () => {
      await sleep(20);
      throw new Error("Connection is closed.");
    };
    await assert.rejects(
      call("token.lookup", failsLate, "read"),
      (thrown) =>
        thrown instanceof StoreError &&
        thrown.cause instanceof Error &&
        thrown.cause.name === "ReadDeadlineError",
    );
    // The late failure is dropped, not an unhandled rejection.
    await sleep(40);
    assert.equal(observed.length, 1);
  });

  it("without observer or tracer it still answers and fails alike", async () => {
    const call = createRedisRunner();
    assert.equal(await call("keys.read", async () => 1, "read"), 1);
    await assert.rejects(
      call("keys.read", () => Promise.reject(replyError("ERR nope")), "read"),
      (thrown) => thrown instanceof StoreError && thrown.kind === "rejected",
    );
  });
});
