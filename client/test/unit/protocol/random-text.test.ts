import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { randomText } from "../../../src/protocol/random-text.js";

describe("randomText", () => {
  it("gives base64url text of the asked number of bytes", () => {
    for (const bytes of [1, 12, 32, 4096]) {
      const text = randomText(bytes);
      assert.match(text, /^[A-Za-z0-9_-]+$/);
      assert.equal(Buffer.from(text, "base64url").length, bytes);
    }
  });

  it("never repeats itself across many pool refills", () => {
    // 20,000 × 44 bytes is over 200 refills of the 4 KiB pool.
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      seen.add(randomText(32));
      seen.add(randomText(12));
    }
    assert.equal(seen.size, 40_000);
  });

  it("bytes are spread evenly over all 256 values", () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 8_000; i++) {
      for (const byte of Buffer.from(randomText(32), "base64url")) {
        counts[byte] = (counts[byte] ?? 0) + 1;
      }
    }
    // 256,000 bytes: 1,000 expected per value; a chi-square above 400 (255
    // degrees of freedom) happens by chance less than once in 10^7 runs.
    const chiSquare = counts.reduce((sum, n) => sum + (n - 1000) ** 2 / 1000, 0);
    assert.ok(chiSquare < 400, `chi-square ${chiSquare}`);
    assert.ok(
      counts.every((n) => n > 0),
      "every byte value occurs",
    );
  });

  it("refuses sizes it cannot serve", () => {
    for (const bytes of [0, -1, 1.5, 4097, Number.NaN]) {
      assert.throws(() => randomText(bytes), RangeError);
    }
  });
});
