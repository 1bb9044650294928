import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodePageToken, encodePageToken } from "../../../src/token/token-service.js";

describe("page token", () => {
  it("round-trips a position, names of any UTF-8 included, as base64url", () => {
    for (const position of [
      { expiresAtMs: 1_795_401_308_789, name: "my-bot" },
      { expiresAtMs: 0, name: "😀".repeat(128) },
      { expiresAtMs: 1, name: "a:b:c" },
    ]) {
      const token = encodePageToken(position);
      assert.match(token, /^[A-Za-z0-9_-]+$/);
      assert.deepEqual(decodePageToken(token), position);
    }
  });

  it("refuses anything this service did not issue", () => {
    const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64url");
    for (const token of [
      "",
      "not base64!",
      `${b64("1:5:x")}=`, // padded: not the spelling issued
      b64("2:5:x"), // another version
      b64("1:x:x"),
      b64("1:5:"), // no name
      b64("1:12345678901234567:x"), // beyond 16 digits
      b64(`1:5:${"😀".repeat(129)}`), // a name longer than any allowed
      b64(Buffer.from([0x31, 0x3a, 0x35, 0x3a, 0xff])), // not UTF-8
    ]) {
      assert.equal(decodePageToken(token), undefined, token);
    }
  });
});
