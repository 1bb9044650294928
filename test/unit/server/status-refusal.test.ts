import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { attachExchange, Exchange } from "../../../src/server/exchange.js";
import { type RefusalOptions, refuseWithStatus } from "../../../src/server/status-refusal.js";
import type { StatusAnswer } from "../../../src/status/status-answer.js";

/** Refuses one request with `answer`; the client's view and the exchange's record. */
async function refused(answer: StatusAnswer, opts?: RefusalOptions) {
  const exchange = new Exchange("id-1", 0);
  const server = createServer((req, res) => {
    attachExchange(req, exchange);
    refuseWithStatus(req, res, answer, opts);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
    return { status: res.status, headers: res.headers, body: await res.json(), exchange };
  } finally {
    server.close();
  }
}

describe("a listener's refusal in the JSON error shape", () => {
  it("answers the status and google.rpc.Status, and records the code and message", async () => {
    const { status, headers, body, exchange } = await refused({
      status: 405,
      code: Code.Unimplemented,
      message: "method PUT is not allowed here",
      headers: { allow: "GET, HEAD" },
    });
    assert.equal(status, 405);
    assert.equal(headers.get("allow"), "GET, HEAD");
    assert.deepEqual(body, { code: 12, message: "method PUT is not allowed here", details: [] });
    assert.equal(exchange.code, Code.Unimplemented);
    assert.equal(exchange.message, "method PUT is not allowed here");
  });

  it("records our failure's cause for the log, and sends only the neutral message", async () => {
    const { status, body, exchange } = await refused(
      { status: 503, code: Code.Unavailable, message: "Token store unavailable, try again" },
      { logged: "Error: ECONNREFUSED 10.0.0.7:6379" },
    );
    assert.equal(status, 503);
    assert.equal((body as { message: string }).message, "Token store unavailable, try again");
    assert.equal(exchange.message, "Error: ECONNREFUSED 10.0.0.7:6379");
  });
});
