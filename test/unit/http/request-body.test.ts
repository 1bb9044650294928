import assert from "node:assert/strict";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import {
  type BodySource,
  joined,
  readNoMore,
  readRequestBody,
  replay,
} from "../../../src/http/request-body.js";

// An HTTP/1.1 request body as node gives it is a readable stream of Buffers:
// a PassThrough stands in for one (the HTTP/2 stream paths run in
// test/integration/read-limits.test.ts).
const body = () => new PassThrough();
const source = (stream: PassThrough) => stream as unknown as BodySource;

async function all(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const read: Uint8Array[] = [];
  for await (const chunk of chunks) {
    read.push(chunk);
  }
  return Buffer.concat(read).toString();
}

describe("readRequestBody", () => {
  it("reads a body under the limit to its end", async () => {
    const req = body();
    const reading = readRequestBody(source(req), 100);
    req.write("hello ");
    req.end("world");
    const read = await reading;
    assert.equal(read.ended, true);
    assert.equal(read.total, 11);
    assert.equal(joined(read).toString(), "hello world");
    // Nothing comes after the end: the reader removes nothing on the hot path.
    assert.equal(req.listenerCount("data"), 1, "its listener goes with the request");
  });

  it("stops at the first chunk past the limit, pauses the request, and replays it all", async () => {
    const req = body();
    const reading = readRequestBody(source(req), 6);
    req.write("abcd");
    req.write("efgh");
    const read = await reading;
    assert.equal(read.ended, false);
    assert.equal(read.total, 8);
    assert.equal(req.isPaused(), true);
    assert.equal(req.listenerCount("data"), 0);
    req.end("ijkl");
    assert.equal(await all(replay(read, source(req))), "abcdefghijkl");
  });

  it("stops as soon as the announced size is too large, even with the head split over chunks", async () => {
    const heads: string[] = [];
    const announced = {
      bytes: 5,
      tooLarge: (head: Buffer) => {
        heads.push(head.toString());
        return head.readUInt32BE(1) > 10;
      },
    };
    const req = body();
    const reading = readRequestBody(source(req), 1000, announced);
    req.write(Buffer.from([0, 0, 0]));
    req.write(Buffer.from([0, 200, 1, 2]));
    const read = await reading;
    assert.equal(read.ended, false);
    assert.equal(read.total, 7);
    assert.equal(heads.length, 1, "asked once, when the head is complete");

    const fine = body();
    const whole = readRequestBody(source(fine), 1000, announced);
    fine.write(Buffer.from([0, 0, 0, 0, 2]));
    fine.end(Buffer.from("ok"));
    assert.deepEqual(await whole, {
      chunks: [Buffer.from([0, 0, 0, 0, 2]), Buffer.from("ok")],
      total: 7,
      ended: true,
    });
  });

  it("stops listening when the request fails (and never answers with part of a body)", async () => {
    const req = body();
    let settled = false;
    void readRequestBody(source(req), 100).then(() => {
      settled = true;
    });
    req.write("part");
    const closed = new Promise((done) => req.on("close", done));
    req.destroy(new Error("reset"));
    await closed;
    assert.equal(req.listenerCount("data"), 0);
    assert.equal(req.listenerCount("end"), 0);
    assert.equal(settled, false);
  });
});

describe("joined", () => {
  it("is the one chunk itself, or the chunks concatenated", () => {
    const only = Buffer.from("one");
    assert.equal(joined({ chunks: [only], total: 3, ended: true }), only);
    assert.equal(
      joined({ chunks: [Buffer.from("a"), Buffer.from("b")], total: 2, ended: true }).toString(),
      "ab",
    );
    assert.equal(joined({ chunks: [], total: 0, ended: true }).length, 0);
  });
});

describe("readNoMore", () => {
  it("HTTP/1.1: lets the rest of a body stopped at a limit flow away", async () => {
    const req = body();
    const read = await (async () => {
      const reading = readRequestBody(source(req), 2);
      req.write("abc");
      return reading;
    })();
    assert.equal(read.ended, false);
    assert.equal(req.isPaused(), true);
    readNoMore(source(req), false);
    assert.equal(req.isPaused(), false);
    req.end("rest");
    await once(req, "end");
  });
});
