import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, it } from "node:test";
import { createInFlightRequests } from "../../../../src/server/listener/in-flight-requests.js";

describe("in-flight requests", () => {
  it("counts each request until its answer closes", () => {
    const inFlight = createInFlightRequests();
    const [a, b] = [new EventEmitter(), new EventEmitter()];
    inFlight.track(a);
    inFlight.track(b);
    assert.equal(inFlight.count, 2);
    a.emit("close");
    a.emit("close"); // Counted down once only.
    assert.equal(inFlight.count, 1);
    b.emit("close");
    assert.equal(inFlight.count, 0);
  });

  it("settles when the last answer closes, before its time is up", async () => {
    const inFlight = createInFlightRequests();
    const answers = [new EventEmitter(), new EventEmitter()];
    for (const answer of answers) {
      inFlight.track(answer);
    }
    let settled = false;
    // Far longer than the test: only the last close can settle it in time.
    const settling = inFlight.settled(60_000).then(() => {
      settled = true;
    });
    answers[0]?.emit("close");
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, "one request is still in flight");
    answers[1]?.emit("close");
    await settling;
    assert.equal(inFlight.count, 0);
  });

  it("settles when its time is up, the request still in flight", async () => {
    const inFlight = createInFlightRequests();
    inFlight.track(new EventEmitter());
    await inFlight.settled(10);
    assert.equal(inFlight.count, 1);
  });
});
