import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { forgettingAfter } from "../../../src/store/token-store.js";

describe("forgettingAfter", () => {
  it("forgets only once the write answered, and answers what it answered", async () => {
    const events: string[] = [];
    let answer: (value: string) => void = () => undefined;
    const done = forgettingAfter(
      () => events.push("forget"),
      () => {
        events.push("write");
        return new Promise<string>((resolve) => {
          answer = resolve;
        });
      },
    );
    await Promise.resolve();
    assert.deepEqual(events, ["write"]);
    answer("deleted");
    assert.equal(await done, "deleted");
    assert.deepEqual(events, ["write", "forget"]);
  });

  it("forgets when the write fails, and fails alike", async () => {
    const failure = new Error("Connection is closed.");
    let forgotten = 0;
    await assert.rejects(
      forgettingAfter(
        () => forgotten++,
        () => Promise.reject(failure),
      ),
      (err) => err === failure,
    );
    assert.equal(forgotten, 1);
  });

  it("forgets when the write throws before it is sent", async () => {
    let forgotten = 0;
    await assert.rejects(
      forgettingAfter(
        () => forgotten++,
        () => {
          throw new Error("no connection");
        },
      ),
      /no connection/,
    );
    assert.equal(forgotten, 1);
  });
});
