import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  FrameType,
  grpcRequestHeaderBlock,
  h2Frame,
  settingsFrame,
  windowUpdateFrame,
} from "../../../bench/h2-frames.js";

describe("h2Frame", () => {
  it("writes the 9-byte header: 24-bit length, type, flags, stream id", () => {
    const frame = h2Frame(FrameType.DATA, 1, 5, Buffer.from("abc"));
    assert.deepEqual([...frame], [0, 0, 3, 0, 1, 0, 0, 0, 5, 0x61, 0x62, 0x63]);
  });

  it("writes SETTINGS pairs and WINDOW_UPDATE increments", () => {
    assert.deepEqual(
      [...settingsFrame([[4, 65536]])],
      [0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0],
    );
    assert.deepEqual([...windowUpdateFrame(0, 1000)], [0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0, 3, 0xe8]);
  });
});

describe("grpcRequestHeaderBlock", () => {
  it("encodes a stateless HPACK block with the static table's names", () => {
    const block = grpcRequestHeaderBlock("h:1", "/a/B");
    assert.deepEqual(
      [...block],
      [
        0x83,
        0x86,
        0x04,
        4,
        ...Buffer.from("/a/B"),
        0x01,
        3,
        ...Buffer.from("h:1"),
        0x0f,
        0x10,
        16,
        ...Buffer.from("application/grpc"),
        0x00,
        2,
        ...Buffer.from("te"),
        8,
        ...Buffer.from("trailers"),
      ],
    );
  });

  it("writes lengths of 127 and more over several bytes", () => {
    const path = `/${"x".repeat(199)}`;
    const block = grpcRequestHeaderBlock("h", path);
    // 0x7f then 200 - 127 = 73.
    assert.deepEqual([...block.subarray(2, 5)], [0x04, 0x7f, 73]);
  });
});
