import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { grpcFrame, grpcMessageLength } from "../../../bench/grpc-frame.js";

describe("grpcFrame", () => {
  it("prefixes the message with flag 0 and its big-endian length", () => {
    const frame = grpcFrame(Uint8Array.of(0x0a, 0x02, 0x68, 0x69));
    assert.deepEqual([...frame], [0, 0, 0, 0, 4, 0x0a, 0x02, 0x68, 0x69]);
  });

  it("frames an empty message as five bytes", () => {
    assert.deepEqual([...grpcFrame(new Uint8Array(0))], [0, 0, 0, 0, 0]);
  });

  it("writes lengths above 255 over several bytes", () => {
    const frame = grpcFrame(new Uint8Array(300));
    assert.equal(frame.readUInt32BE(1), 300);
    assert.equal(frame.length, 305);
  });
});

describe("grpcMessageLength", () => {
  it("reads back the length of a framed message", () => {
    assert.equal(grpcMessageLength(grpcFrame(new Uint8Array(42))), 42);
    assert.equal(grpcMessageLength(grpcFrame(new Uint8Array(0))), 0);
  });

  it("refuses a truncated, padded, compressed or missing frame", () => {
    const frame = grpcFrame(new Uint8Array(10));
    assert.equal(grpcMessageLength(frame.subarray(0, 9)), undefined);
    assert.equal(grpcMessageLength(Buffer.concat([frame, Buffer.of(0)])), undefined);
    const compressed = Buffer.from(frame);
    compressed[0] = 1;
    assert.equal(grpcMessageLength(compressed), undefined);
    assert.equal(grpcMessageLength(Buffer.alloc(0)), undefined);
  });
});
