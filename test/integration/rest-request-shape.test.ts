import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import {
  type Changes,
  createFields,
  DEFAULT_EXPIRES_IN,
  deleteFields,
  type Fields,
  INVALID_ARGUMENT,
  jsonText,
  MAX_LIFETIME,
  MAX_SAFE,
  NOT_FOUND,
  PATH,
  RawJson,
  SIGNATURE_MESSAGE,
  TWO_53,
  uuidWith,
  withChanges,
} from "../support/rest-contract-bodies.js";
import { assertDeleted, assertError, assertExpired } from "../support/rest-contract-checks.js";
import { restContractSuite } from "../support/rest-contract-suite.js";

// The REST contract of POST/DELETE /user/tokens, continued (rest-contract.test.ts).

describe("REST contract of /user/tokens", () => {
  const { registeredUser, rest, post, del, created } = restContractSuite();

  describe("rule 1: shape → 400 INVALID_ARGUMENT naming the field", () => {
    // Cases of the fields create and delete share, each listed once.
    const signatureLengthCases = [127, 129].map((length) => ({
      name: `signature of ${length} chars`,
      change: { signature: "a".repeat(length) },
      message: SIGNATURE_MESSAGE,
    }));
    const timestampTypeCases = [
      { name: "timestamp 2^53", change: { timestamp: TWO_53 }, message: /^timestamp: / },
      { name: "timestamp -(2^53)", change: { timestamp: -TWO_53 }, message: /^timestamp: / },
      { name: "timestamp true", change: { timestamp: true }, message: /^timestamp: / },
      { name: "timestamp null", change: { timestamp: null }, message: /^timestamp: / },
    ];
    const createCases: {
      name: string;
      change: Changes | ((fields: Fields) => Changes);
      message: string | RegExp;
    }[] = [
      // signature
      {
        name: "uppercase signature (a valid one, upper-cased)",
        change: (fields) => ({ signature: String(fields.signature).toUpperCase() }),
        message: SIGNATURE_MESSAGE,
      },
      ...signatureLengthCases,
      {
        name: "0x + 128 hex chars",
        change: { signature: `0x${"a".repeat(128)}` },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "0x + 126 hex chars",
        change: { signature: `0x${"a".repeat(126)}` },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "non-hex signature",
        change: { signature: "g".repeat(128) },
        message: SIGNATURE_MESSAGE,
      },
      { name: "empty signature", change: { signature: "" }, message: /^signature: / },
      { name: "signature as a number", change: { signature: 5 }, message: /^signature: / },
      { name: "signature null", change: { signature: null }, message: /^signature: / },
      // timestamp typing and range
      {
        name: "timestamp as a string",
        change: { timestamp: String(Date.now()) },
        message: /^timestamp: /,
      },
      {
        name: "timestamp with a fraction",
        change: { timestamp: Date.now() + 0.5 },
        message: /^timestamp: /,
      },
      {
        name: "timestamp 1e400",
        change: { timestamp: new RawJson("1e400") },
        message: /^timestamp: /,
      },
      {
        name: "timestamp -1e400",
        change: { timestamp: new RawJson("-1e400") },
        message: /^timestamp: /,
      },
      ...timestampTypeCases,
      { name: "timestamp as an object", change: { timestamp: {} }, message: /^timestamp: / },
      // userId
      {
        name: "userId not a UUID",
        change: { userId: "user-1" },
        message: /^userId: must be a UUID/,
      },
      {
        name: "userId without dashes",
        change: { userId: randomUUID().replaceAll("-", "") },
        message: /^userId: must be a UUID/,
      },
      {
        name: "userId in braces",
        change: { userId: `{${randomUUID()}}` },
        message: /^userId: must be a UUID/,
      },
      { name: "userId as a number", change: { userId: 5 }, message: /^userId: / },
      { name: "userId null", change: { userId: null }, message: /^userId: / },
      ...["0", "9"].map((v) => ({
        name: `userId version digit ${v}`,
        change: { userId: uuidWith(v, "8") },
        message: /^userId: must be a UUID/,
      })),
      ...["0", "1", "2", "3", "4", "5", "6", "7", "c", "d", "e", "f", "C", "F"].map((v) => ({
        name: `userId variant digit ${v}`,
        change: { userId: uuidWith("4", v) },
        message: /^userId: must be a UUID/,
      })),
      // expiresIn typing, range and rules
      { name: "expiresIn as a string", change: { expiresIn: "3600" }, message: /^expiresIn: / },
      { name: "expiresIn with a fraction", change: { expiresIn: 3600.5 }, message: /^expiresIn: / },
      {
        name: "expiresIn 1e400",
        change: { expiresIn: new RawJson("1e400") },
        message: /^expiresIn: /,
      },
      { name: "expiresIn 2^53", change: { expiresIn: TWO_53 }, message: /^expiresIn: / },
      { name: "expiresIn -(2^53)", change: { expiresIn: -TWO_53 }, message: /^expiresIn: / },
      { name: "expiresIn true", change: { expiresIn: true }, message: /^expiresIn: / },
      { name: "expiresIn null", change: { expiresIn: null }, message: /^expiresIn: / },
      {
        name: "expiresIn 0",
        change: { expiresIn: 0 },
        message: "expiresIn: must be greater than 0",
      },
      {
        name: "expiresIn -1",
        change: { expiresIn: -1 },
        message: "expiresIn: must be greater than 0",
      },
      {
        name: "expiresIn -(2^53-1)",
        change: { expiresIn: -MAX_SAFE },
        message: "expiresIn: must be greater than 0",
      },
      {
        name: "expiresIn 604801 without name",
        change: { expiresIn: DEFAULT_EXPIRES_IN + 1, name: undefined },
        message: "name: is required when expiresIn is greater than 604800",
      },
      {
        name: "expiresIn 31536001 with a name",
        change: { expiresIn: MAX_LIFETIME + 1 },
        message: /^expiresIn: must be at most 31536000/,
      },
      {
        name: "expiresIn 2^53-1 with a name",
        change: { expiresIn: MAX_SAFE },
        message: /^expiresIn: must be at most 31536000/,
      },
      // name
      { name: "empty name", change: { name: "" }, message: /^name: / },
      { name: "name of 129 characters", change: { name: "n".repeat(129) }, message: /^name: / },
      { name: "name with U+0001", change: { name: "a\u0001b" }, message: /^name: / },
      { name: "name with a newline", change: { name: "a\nb" }, message: /^name: / },
      { name: "name with DEL", change: { name: "a\u007fb" }, message: /^name: / },
      { name: "name with a C1 control", change: { name: "a\u0085b" }, message: /^name: / },
      { name: "name as a number", change: { name: 5 }, message: /^name: / },
      { name: "name true", change: { name: true }, message: /^name: / },
      { name: "name null", change: { name: null }, message: /^name: / },
      { name: "name as an array", change: { name: ["a"] }, message: /^name: / },
    ];

    for (const c of createCases) {
      it(`create refuses ${c.name}`, async () => {
        const user = await registeredUser();
        const fields = await createFields(user, { expiresIn: 3600, name: "shape" });
        const change = typeof c.change === "function" ? c.change(fields) : c.change;
        const res = await post(withChanges(fields, change));
        assertError(res, 400, INVALID_ARGUMENT, c.message);
      });
    }

    const deleteCases: { name: string; change: Changes; message: string | RegExp }[] = [
      { name: "empty tokenId", change: { tokenId: "" }, message: "tokenId: is required" },
      {
        name: "tokenId of 129 characters",
        change: { tokenId: "t".repeat(129) },
        message: /^tokenId: /,
      },
      { name: "tokenId as a number", change: { tokenId: 5 }, message: /^tokenId: / },
      { name: "tokenId null", change: { tokenId: null }, message: /^tokenId: / },
      {
        name: "uppercase signature",
        change: { signature: "A".repeat(128) },
        message: SIGNATURE_MESSAGE,
      },
      ...signatureLengthCases,
      {
        name: "0x signature",
        change: { signature: `0x${"a".repeat(128)}` },
        message: SIGNATURE_MESSAGE,
      },
      {
        name: "timestamp as a string",
        change: { timestamp: String(Date.now()) },
        message: /^timestamp: /,
      },
      { name: "timestamp with a fraction", change: { timestamp: 1.5 }, message: /^timestamp: / },
      {
        name: "timestamp 1e400",
        change: { timestamp: new RawJson("1e400") },
        message: /^timestamp: /,
      },
      ...timestampTypeCases,
      {
        name: "userId version 9",
        change: { userId: uuidWith("9", "a") },
        message: /^userId: must be a UUID/,
      },
      {
        name: "userId variant c",
        change: { userId: uuidWith("4", "c") },
        message: /^userId: must be a UUID/,
      },
      { name: "userId as a number", change: { userId: 5 }, message: /^userId: / },
    ];

    for (const c of deleteCases) {
      it(`delete refuses ${c.name}`, async () => {
        const user = await registeredUser();
        const res = await del(withChanges(await deleteFields(user, "some-token"), c.change));
        assertError(res, 400, INVALID_ARGUMENT, c.message);
      });
    }

    for (const field of ["signature", "timestamp", "userId"]) {
      it(`create without ${field} → 400 "${field}: is required"`, async () => {
        const user = await registeredUser();
        const fields = await createFields(user, { name: `missing ${field}` });
        const res = await post(withChanges(fields, { [field]: undefined }));
        assertError(res, 400, INVALID_ARGUMENT, `${field}: is required`);
      });
    }

    for (const field of ["signature", "timestamp", "tokenId", "userId"]) {
      it(`delete without ${field} → 400 "${field}: is required"`, async () => {
        const user = await registeredUser();
        const token = await created(user);
        const res = await del(
          withChanges(await deleteFields(user, token.id), { [field]: undefined }),
        );
        assertError(res, 400, INVALID_ARGUMENT, `${field}: is required`);
        // The refused request deleted nothing.
        assertDeleted(await del(await deleteFields(user, token.id)));
      });
    }

    it("a required field given only in the query string is still missing (body is *)", async () => {
      const user = await registeredUser();
      const fields = await createFields(user);
      const res = await rest("POST", jsonText(withChanges(fields, { timestamp: undefined })), {
        path: `${PATH}?timestamp=${String(fields.timestamp)}`,
      });
      assertError(res, 400, INVALID_ARGUMENT, "timestamp: is required");
    });

    for (const text of ["[]", '"x"', "null", "", "{", "42", "true", '{"a":1', "{}x"]) {
      it(`refuses the non-object body ${JSON.stringify(text)} for POST and DELETE`, async () => {
        for (const method of ["POST", "DELETE"]) {
          assertError(await rest(method, text), 400, INVALID_ARGUMENT);
        }
      });
    }

    it("refuses a body that is not UTF-8", async () => {
      const user = await registeredUser();
      const text = jsonText(await createFields(user, { name: "NAME" }));
      const bytes = Buffer.from(text, "utf8");
      const at = bytes.indexOf("NAME");
      bytes[at] = 0xff;
      assertError(await rest("POST", bytes), 400, INVALID_ARGUMENT);
    });

    it("checks the shape before the time window", async () => {
      const user = await registeredUser();
      const res = await post(await createFields(user, { timestamp: 1, expiresIn: 0 }));
      assertError(res, 400, INVALID_ARGUMENT, "expiresIn: must be greater than 0");
    });

    it("accepts the boundaries: name of 128 characters (emoji count as one), expiresIn 1", async () => {
      const user = await registeredUser();
      await created(user, { name: "n".repeat(128) });
      await created(user, { name: "🚀".repeat(128), expiresIn: 1 });
    });

    it("a tokenId of 128 characters passes the shape rules (→ 404 for an unknown one)", async () => {
      const user = await registeredUser();
      const res = await del(await deleteFields(user, "t".repeat(128)));
      assertError(res, 404, NOT_FOUND);
    });

    it("a tokenId with a lone surrogate → 400 (its UTF-8 would be U+FFFD's, another id's message)", async () => {
      const user = await registeredUser();
      // JSON.stringify escapes the lone surrogate as \ud800; signText signs its UTF-8, U+FFFD.
      const fields = await deleteFields(user, "a\uD800b");
      assert.match(jsonText(fields), /a\\ud800b/);
      assertError(
        await del(fields),
        400,
        INVALID_ARGUMENT,
        "tokenId: must not contain unpaired surrogates",
      );
    });

    it("timestamps of ±(2^53−1) pass the shape rules and are expired (→ 401)", async () => {
      const user = await registeredUser();
      for (const timestamp of [MAX_SAFE, -MAX_SAFE]) {
        assertExpired(await post(await createFields(user, { timestamp })));
        assertExpired(await del(await deleteFields(user, "x", { timestamp })));
      }
    });
  });
});
