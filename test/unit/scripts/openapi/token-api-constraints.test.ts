import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  CreateTokenRequestSchema,
  DeleteTokenRequestSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { generateToken } from "@perps/token-client/protocol";
import fc from "fast-check";
import {
  TOKEN_PATTERN,
  tokenApiConstraints,
} from "../../../../scripts/openapi/token-api-constraints.js";
import { createTokenApiOpenApiDocument } from "../../../../scripts/openapi/token-api-document.js";
import type { JsonSchema } from "../../../../src/openapi/openapi-document.js";
import { checkCreateRequest, checkDeleteRequest } from "../../../../src/token/request-rules.js";
import { createRequestValidator } from "../../../../src/validation/validation-interceptor.js";
import { isSpecUserId } from "../../../support/spec-user-id.js";

// The document's request constraints are generated from the buf.validate
// rules of the proto; these properties pin them to what the service does
// with a request (the validator, then src/token/request-rules.ts). Patterns
// are compiled as JSON Schema validators do (ECMA-262, unicode mode).

const schemas = createTokenApiOpenApiDocument().components?.schemas ?? {};

function property(message: string, field: string): JsonSchema {
  const properties = schemas[message]?.properties as Record<string, JsonSchema> | undefined;
  const schema = properties?.[field];
  assert.ok(schema !== undefined, `${message}.${field}`);
  return schema;
}

function patternOf(schema: JsonSchema): string {
  assert.equal(typeof schema.pattern, "string");
  return String(schema.pattern);
}

const createName = "perps.token.v1.CreateTokenRequest";
const deleteName = "perps.token.v1.DeleteTokenRequest";
const validator = createRequestValidator();

const good = {
  signature: "ab".repeat(64),
  timestamp: 1_700_000_000_000n,
  userId: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
};
const opts = { maxLifetimeSeconds: 31_536_000 };
const runs = { numRuns: 2000 };

function regex(pattern: string): RegExp {
  return new RegExp(pattern, "u");
}

/** The problems checkCreateRequest reports for one field, or "" when it accepts it. */
function createProblem(
  change: MessageInitShape<typeof CreateTokenRequestSchema>,
  field: string,
): string {
  try {
    const req = create(CreateTokenRequestSchema, { ...good, ...change });
    const problems = validator.problems(CreateTokenRequestSchema, req);
    if (problems.length > 0) {
      throw new Error(problems.join("; "));
    }
    checkCreateRequest(req, opts);
    return "";
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return message.includes(`${field}:`) ? message : "";
  }
}

const hexChar = fc.constantFrom(..."0123456789abcdefABCDEFxg-");
const hexString = (min: number, max: number) =>
  fc.array(hexChar, { minLength: min, maxLength: max }).map((chars) => chars.join(""));

/** Strings near a UUID: right length and dashes with random digits, plus mutations. */
const uuidLike = fc.oneof(
  fc.uuid({ version: [1, 2, 3, 4, 5, 6, 7, 8] }),
  fc.uuid().map((u) => u.toUpperCase()),
  fc
    .tuple(hexString(8, 8), hexString(4, 4), hexString(4, 4), hexString(4, 4), hexString(12, 12))
    .map((parts) => parts.join("-")),
  fc.constantFrom(
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
    "ffffffff-ffff-ffff-ffff-fffffffffffe",
  ),
  fc.string(),
);

describe("the token API's OpenAPI constraints agree with the service's rules", () => {
  it("userId pattern ⇔ isSpecUserId", () => {
    const re = regex(patternOf(property(createName, "userId")));
    assert.equal(patternOf(property(deleteName, "userId")), re.source);
    fc.assert(
      fc.property(
        uuidLike,
        (id) =>
          re.test(id) === isSpecUserId(id) &&
          re.test(id) === (createProblem({ userId: id }, "userId") === ""),
      ),
      runs,
    );
  });

  it("signature pattern ⇔ the signature rule", () => {
    const re = regex(patternOf(property(createName, "signature")));
    assert.equal(patternOf(property(deleteName, "signature")), re.source);
    const signature = fc.oneof(
      hexString(126, 130),
      fc.constant("ab".repeat(64)),
      fc.constant(`0x${"ab".repeat(63)}`),
      fc.string(),
    );
    fc.assert(
      fc.property(
        signature,
        (s) => re.test(s) === (createProblem({ signature: s }, "signature") === ""),
      ),
      { numRuns: 500 },
    );
  });

  it("name pattern and lengths ⇔ the name rule (except unpaired surrogates)", () => {
    const schema = property(createName, "name");
    const re = regex(patternOf(schema));
    assert.deepEqual([schema.minLength, schema.maxLength], [1, 128]);
    const name = fc.oneof(
      fc.string({ unit: "binary", maxLength: 140 }),
      fc.string({
        unit: fc.constantFrom("a", "🚀", "\u0000", "\u001f", "\u007f", "\u0085", "\u00a0"),
        maxLength: 130,
      }),
    );
    fc.assert(
      fc.property(name, (n) => {
        const length = [...n].length;
        const documented = re.test(n) && length >= 1 && length <= 128;
        return documented === (createProblem({ name: n }, "name") === "");
      }),
      runs,
    );
  });

  it("tokenId lengths ⇔ the tokenId rule", () => {
    const schema = property(deleteName, "tokenId");
    assert.deepEqual([schema.minLength, schema.maxLength], [1, 128]);
    for (const length of [0, 1, 128, 129]) {
      const req = create(DeleteTokenRequestSchema, { ...good, tokenId: "🚀".repeat(length) });
      let accepted = validator.problems(DeleteTokenRequestSchema, req).length === 0;
      try {
        checkDeleteRequest(req);
      } catch {
        accepted = false;
      }
      assert.equal(accepted, length >= 1 && length <= 128, String(length));
    }
  });

  it("expiresIn: minimum 1 and the default the service applies", () => {
    const schema = property(createName, "expiresIn");
    assert.equal(schema.minimum, 1);
    assert.equal(createProblem({}, "expiresIn"), "");
    const checked = checkCreateRequest(create(CreateTokenRequestSchema, good), opts);
    assert.equal(schema.default, checked.lifetimeSeconds);
    assert.notEqual(createProblem({ expiresIn: 0n }, "expiresIn"), "");
    assert.equal(createProblem({ expiresIn: 1n }, "expiresIn"), "");
  });

  it("the token pattern matches the tokens the service makes", () => {
    const re = regex(TOKEN_PATTERN);
    for (let i = 0; i < 200; i++) {
      assert.match(generateToken(randomUUID(), "AAAAAAAAAAAAAAAA"), re);
    }
  });

  it("every key names a field or message of the token API", () => {
    const known = new Set<string>();
    for (const desc of CreateTokenRequestSchema.file.messages) {
      known.add(desc.typeName);
      for (const f of desc.fields) {
        known.add(`${desc.typeName}.${f.name}`);
      }
    }
    for (const key of Object.keys(tokenApiConstraints)) {
      assert.ok(known.has(key), key);
    }
  });
});
