import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { huffmanDecode } from "../../../bench/hpack-huffman.js";

const hex = (text: string) => Buffer.from(text.replace(/\s/g, ""), "hex");

describe("huffmanDecode", () => {
  it("decodes RFC 7541's Huffman examples", () => {
    assert.equal(huffmanDecode(hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff")), "www.example.com");
    assert.equal(huffmanDecode(hex("a8eb 1064 9cbf")), "no-cache");
    assert.equal(huffmanDecode(hex("6402")), "302");
  });

  it("refuses padding that is not EOS' leading ones", () => {
    assert.equal(huffmanDecode(hex("1f")), "a");
    assert.throws(() => huffmanDecode(hex("10")));
  });
});
