import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createBoundedCache } from "../../../src/cache/bounded-cache.js";
import { type CacheGraceObserver, createCacheGrace } from "../../../src/store/cache-grace.js";

/** A grace on a clock the test moves, with what it told its observer. */
function setUp(graceMs = 3000) {
  let clock = 1000;
  const told: string[] = [];
  const observer: CacheGraceObserver = {
    started: (held, since) => told.push(`started ${held} ${since}`),
    served: () => told.push("served"),
    ended: (reason, served) => told.push(`ended ${reason} ${served}`),
  };
  const grace = createCacheGrace<string>({ graceMs, observer, now: () => clock });
  const records = () => {
    const held = createBoundedCache<string, string>(10);
    held.set("a", "record a");
    held.set("b", "record b");
    return held;
  };
  return {
    grace,
    told,
    records,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

describe("createCacheGrace", () => {
  it("a loss alone serves nothing: only Redis failing to answer does, from the loss on", () => {
    const { grace, told, records, advance } = setUp();
    grace.hold(records());
    assert.equal(grace.serving, false);
    assert.equal(grace.take("a"), undefined, "a dropped connection to a Redis that is up");
    advance(1200);
    grace.failed();
    assert.equal(grace.serving, true);
    assert.equal(grace.take("a"), "record a");
    assert.equal(grace.take("c"), undefined, "a token not held: still a 503");
    assert.deepEqual(told, ["started 2 1200", "served"]);
  });

  it("serves nothing past the grace, counted from the loss", () => {
    const { grace, told, records, advance } = setUp();
    grace.hold(records());
    grace.failed();
    advance(2999);
    assert.equal(grace.take("a"), "record a");
    advance(1);
    assert.equal(grace.take("a"), undefined);
    assert.equal(grace.serving, false);
    assert.deepEqual(told, ["started 2 0", "served", "ended grace over 1"]);
    // Nothing held any more: a later failure starts nothing.
    grace.failed();
    assert.equal(grace.serving, false);
  });

  it("a failure after the grace passed starts nothing", () => {
    const { grace, told, records, advance } = setUp();
    grace.hold(records());
    advance(3000);
    grace.failed();
    assert.equal(grace.serving, false);
    assert.deepEqual(told, []);
  });

  it("Redis answering lets every held record go, before any answer from them", () => {
    const { grace, told, records } = setUp();
    grace.hold(records());
    grace.failed();
    grace.answered();
    assert.equal(grace.take("a"), undefined);
    assert.deepEqual(told, ["started 2 0", "ended redis answered 0"]);
    // Answered before any failure: the held records go, and no line is written.
    grace.hold(records());
    grace.answered();
    grace.failed();
    assert.equal(grace.take("a"), undefined);
    assert.equal(told.length, 2);
  });

  it("a second loss in one outage keeps the first one's bound and records", () => {
    const { grace, records, advance } = setUp();
    grace.hold(records());
    advance(2000);
    const later = createBoundedCache<string, string>(10);
    later.set("z", "record z");
    grace.hold(later);
    assert.equal(later.size, 0, "what came after the first loss is not held");
    grace.failed();
    assert.equal(grace.take("a"), "record a");
    advance(1000);
    assert.equal(grace.take("a"), undefined, "3 s from the first loss");
  });

  it("forgets what this process or Redis said changed; a flush or close drops all", () => {
    const { grace, told, records } = setUp();
    grace.hold(records());
    grace.failed();
    grace.forget("a");
    assert.equal(grace.take("a"), undefined);
    grace.forgetPrefix("b");
    assert.equal(grace.take("b"), undefined);
    grace.drop("flush");
    assert.equal(grace.serving, false);
    assert.deepEqual(told, ["started 2 0", "ended flush 0"]);
  });

  it("holding nothing is no grace: it never says it serves from cache", () => {
    const { grace, told } = setUp();
    grace.hold(createBoundedCache<string, string>(10));
    grace.failed();
    assert.equal(grace.serving, false);
    assert.deepEqual(told, []);
  });

  it("with a grace of 0, a loss drops the records as without one", () => {
    const { grace, told, records } = setUp(0);
    const held = records();
    grace.hold(held);
    assert.equal(held.size, 0);
    grace.failed();
    assert.equal(grace.serving, false);
    assert.equal(grace.take("a"), undefined);
    assert.deepEqual(told, []);
  });
});

describe("createCacheGrace, a failure told before the loss", () => {
  it("serves at once when Redis failed to answer within the last second, and not after", () => {
    const { grace, told, records, advance } = setUp();
    grace.failed();
    advance(500);
    grace.hold(records());
    assert.equal(grace.serving, true, "the refused reconnect came before the cache's close");
    assert.equal(grace.take("a"), "record a");
    grace.answered();
    grace.failed();
    advance(1000);
    grace.hold(records());
    assert.equal(grace.serving, false, "a failure a second old says nothing of this loss");
    assert.deepEqual(told, ["started 2 0", "served", "ended redis answered 1"]);
  });
});
