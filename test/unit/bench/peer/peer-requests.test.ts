import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { peerCreateFrame } from "../../../../bench/peer/peer-requests.js";

describe("peerCreateFrame", () => {
  it("frames the peer's CreateTokenRequest, expires_in as an Int64Value message", () => {
    const json = JSON.stringify({
      signature: "ab".repeat(64),
      timestamp: 1_700_000_000_123,
      userId: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
      expiresIn: 3600,
    });
    const frame = peerCreateFrame(json);
    assert.equal(frame[0], 0);
    assert.equal(frame.readUInt32BE(1), frame.length - 5);
    const reader = new BinaryReader(frame.subarray(5));
    const fields: Record<number, unknown> = {};
    while (reader.pos < reader.len) {
      const [no, type] = reader.tag();
      if (no === 2) {
        fields[no] = reader.int64().toString();
      } else if (no === 4) {
        assert.equal(type, WireType.LengthDelimited);
        const inner = new BinaryReader(reader.bytes());
        assert.deepEqual(inner.tag(), [1, WireType.Varint]);
        fields[no] = inner.int64().toString();
      } else {
        fields[no] = reader.string();
      }
    }
    assert.deepEqual(fields, {
      1: "ab".repeat(64),
      2: "1700000000123",
      3: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
      4: "3600",
    });
  });
});
