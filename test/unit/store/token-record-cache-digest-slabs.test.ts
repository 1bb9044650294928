import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createDigestSlabs } from "../../../src/store/token-record-cache.js";

describe("createDigestSlabs", () => {
  it("copies each digest, sharing nothing with the source", () => {
    const copyDigest = createDigestSlabs(64);
    const digest = Buffer.from(Buffer.alloc(28, 7)); // From node's pool.
    const copy = copyDigest(digest);
    digest.fill(0);
    assert.deepEqual(copy, Buffer.alloc(28, 7));
    assert.notEqual(copy.buffer, digest.buffer);
    assert.notEqual(copy.buffer, Buffer.from([1]).buffer, "not node's pool");
  });

  it("packs digests side by side in one slab, then starts another when it is full", () => {
    const copyDigest = createDigestSlabs(64);
    const [a, b, c] = [1, 2, 3].map((fill) => copyDigest(Buffer.alloc(28, fill)));
    assert.equal(a?.buffer, b?.buffer, "two of 28 bytes fit in 64");
    assert.equal(b?.byteOffset, 28);
    assert.notEqual(c?.buffer, a?.buffer, "a third does not");
    assert.equal(c?.byteOffset, 0);
    assert.equal(c?.buffer.byteLength, 64);
    assert.deepEqual([a?.[0], b?.[0], c?.[0]], [1, 2, 3], "each copy keeps its bytes");
  });

  it("gives a digest larger than a slab a slab of its own size", () => {
    const copyDigest = createDigestSlabs(16);
    const copy = copyDigest(Buffer.alloc(40, 5));
    assert.equal(copy.buffer.byteLength, 40);
    assert.deepEqual(copy, Buffer.alloc(40, 5));
  });
});
