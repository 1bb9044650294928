import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createTokenMessage, deleteTokenMessage } from "../../../src/protocol/signed-message.js";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const U = "0B3C4D5E-1F2A-4B4C-BD9E-0123456789AB";

describe("signed messages", () => {
  it("create: fields in alphabetical order, empty slots for omitted ones", () => {
    const t = 1_700_000_000_000n;
    assert.equal(
      text(createTokenMessage({ timestamp: t, expiresIn: 60n, name: "bot", userId: U })),
      `createToken:1700000000000:60:bot:${U}`,
    );
    assert.equal(
      text(createTokenMessage({ timestamp: t, expiresIn: 60n, name: undefined, userId: U })),
      `createToken:1700000000000:60::${U}`,
    );
    assert.equal(
      text(createTokenMessage({ timestamp: t, expiresIn: undefined, name: "bot", userId: U })),
      `createToken:1700000000000::bot:${U}`,
    );
    assert.equal(
      text(createTokenMessage({ timestamp: t, expiresIn: undefined, name: undefined, userId: U })),
      `createToken:1700000000000:::${U}`,
    );
  });

  it("create: negative timestamps and non-ASCII names are encoded as UTF-8", () => {
    const bytes = createTokenMessage({ timestamp: -5n, expiresIn: 1n, name: "é🚀", userId: U });
    assert.deepEqual(Buffer.from(bytes), Buffer.from(`createToken:-5:1:é🚀:${U}`, "utf8"));
  });

  it("delete: timestamp, tokenId, userId", () => {
    assert.equal(
      text(deleteTokenMessage({ timestamp: 42n, tokenId: "abc", userId: U })),
      `deleteToken:42:abc:${U}`,
    );
  });
});
