import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  type CreateTokenMessageFields,
  createTokenMessage,
  deleteTokenMessage,
} from "../../../src/protocol/signed-message.js";
import { TOKEN_SCOPES } from "../../../src/protocol/token-scopes.js";

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

  it("create with scopes or allowedIps: both lists appended, joined by commas, an absent one empty", () => {
    const t = 1_700_000_000_000n;
    const base = { timestamp: t, expiresIn: 60n, name: "bot", userId: U };
    assert.equal(
      text(
        createTokenMessage({
          ...base,
          scopes: ["read", "withdraw"],
          allowedIps: ["203.0.113.7", "2001:db8::/32"],
        }),
      ),
      `createToken:1700000000000:60:bot:${U}:read,withdraw:203.0.113.7,2001:db8::/32`,
    );
    assert.equal(
      text(createTokenMessage({ ...base, scopes: ["trade"] })),
      `createToken:1700000000000:60:bot:${U}:trade:`,
    );
    assert.equal(
      text(createTokenMessage({ ...base, allowedIps: ["::1"] })),
      `createToken:1700000000000:60:bot:${U}::::1`,
    );
    // Empty lists are absent ones (protobuf cannot tell them apart): the seed's message.
    assert.equal(
      text(createTokenMessage({ ...base, scopes: [], allowedIps: [] })),
      `createToken:1700000000000:60:bot:${U}`,
    );
  });

  it("create: no two different requests sign the same message (each parses back)", () => {
    const cases: CreateTokenMessageFields[] = [
      { ...fields("a"), scopes: ["read"] },
      { ...fields(`a:${U}:read`), allowedIps: undefined },
      { ...fields(`a:${U}`), scopes: ["read"] },
      { ...fields("a"), scopes: ["read"], allowedIps: ["::1"] },
      { ...fields("a:read"), allowedIps: ["::1"] },
      { ...fields(`a,b:${U}:read,trade:10.0.0.0/8`) },
      { ...fields("a,b"), scopes: ["read", "trade"], allowedIps: ["10.0.0.0/8"] },
      { ...fields("x"), allowedIps: ["2001:db8::1", "::ffff:1.2.3.4"] },
      { ...fields("x:2001:db8::1"), allowedIps: ["::ffff:1.2.3.4"] },
      { ...fields(`x:${U}::2001:db8::1`), allowedIps: ["::ffff:1.2.3.4"] },
      { ...fields(undefined), scopes: ["withdraw"], allowedIps: ["1.2.3.4"] },
    ];
    const seen = new Map<string, CreateTokenMessageFields>();
    for (const f of cases) {
      const message = text(createTokenMessage(f));
      assert.deepEqual(parseCreateMessage(message), normalized(f), message);
      assert.equal(seen.get(message), undefined, `two requests sign ${message}`);
      seen.set(message, f);
    }
  });

  it("create: property: every message parses back to the request it was built from", () => {
    fc.assert(
      fc.property(requestArb, (f) => {
        assert.deepEqual(parseCreateMessage(text(createTokenMessage(f))), normalized(f));
      }),
      { numRuns: 2000 },
    );
  });

  it("create: property: different requests give different messages", () => {
    fc.assert(
      fc.property(requestArb, requestArb, (a, b) => {
        fc.pre(JSON.stringify(normalized(a), big) !== JSON.stringify(normalized(b), big));
        assert.notEqual(text(createTokenMessage(a)), text(createTokenMessage(b)));
      }),
      { numRuns: 2000 },
    );
  });

  it("delete: timestamp, tokenId, userId", () => {
    assert.equal(
      text(deleteTokenMessage({ timestamp: 42n, tokenId: "abc", userId: U })),
      `deleteToken:42:abc:${U}`,
    );
  });
});

function fields(name: string | undefined): CreateTokenMessageFields {
  return { timestamp: 1n, expiresIn: undefined, name, userId: U };
}

const big = (_: string, v: unknown) => (typeof v === "bigint" ? `${v}n` : v);

/** A request as its message says it: an omitted or empty list is none. */
function normalized(f: CreateTokenMessageFields): CreateTokenMessageFields {
  return {
    timestamp: f.timestamp,
    expiresIn: f.expiresIn,
    name: f.name,
    userId: f.userId,
    scopes: f.scopes === undefined || f.scopes.length === 0 ? undefined : [...f.scopes],
    allowedIps:
      f.allowedIps === undefined || f.allowedIps.length === 0 ? undefined : [...f.allowedIps],
  };
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * The one reading of a create message (the proof that it is unambiguous):
 * the timestamp and expiresIn hold no `:`; a message that ends in `:<UUID>`
 * is the seed's; otherwise the user id is the last UUID-shaped segment,
 * since neither list holds a `-`, and the scopes (no `:`) come next.
 */
function parseCreateMessage(message: string): CreateTokenMessageFields {
  const head = /^createToken:(-?\d+):(\d*):/.exec(message);
  assert.ok(head, message);
  const [, timestamp = "", expiresIn = ""] = head;
  const rest = message.slice(head[0].length);
  const common = {
    timestamp: BigInt(timestamp),
    expiresIn: expiresIn === "" ? undefined : BigInt(expiresIn),
  };
  const last = rest.slice(-36);
  if (rest.length >= 37 && rest[rest.length - 37] === ":" && UUID.test(last)) {
    const name = rest.slice(0, -37);
    return {
      ...common,
      name: name === "" ? undefined : name,
      userId: last,
      scopes: undefined,
      allowedIps: undefined,
    };
  }
  const segments = rest.split(":");
  let at = segments.length - 1;
  while (at >= 0 && !UUID.test(segments[at] ?? "")) {
    at -= 1;
  }
  assert.ok(at >= 1, message);
  const name = segments.slice(0, at).join(":");
  const scopes = segments[at + 1] ?? "";
  const allowedIps = segments.slice(at + 2).join(":");
  return {
    ...common,
    name: name === "" ? undefined : name,
    userId: segments[at] ?? "",
    scopes: scopes === "" ? undefined : scopes.split(","),
    allowedIps: allowedIps === "" ? undefined : allowedIps.split(","),
  };
}

// Names built from the pieces that could confuse a reader: separators, UUIDs, scope names, IPv6 text.
const namePiece = fc.oneof(
  fc.constantFrom(
    ":",
    ",",
    "-",
    "::",
    U,
    U.toLowerCase(),
    "read",
    "trade,withdraw",
    "::1",
    "10.0.0.0/8",
    "é",
    " ",
  ),
  fc.string({ minLength: 1, maxLength: 4 }),
);
const ipArb = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 32 })).map(([a, b]) => `${a}/${b}`),
  fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 128 })).map(([a, b]) => `${a}/${b}`),
);
const requestArb: fc.Arbitrary<CreateTokenMessageFields> = fc.record({
  timestamp: fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
  expiresIn: fc.option(fc.bigInt({ min: 1n, max: 2n ** 53n }), { nil: undefined }),
  name: fc.option(
    fc.array(namePiece, { minLength: 1, maxLength: 8 }).map((p) => p.join("")),
    { nil: undefined },
  ),
  userId: fc.uuid(),
  scopes: fc.option(
    fc.uniqueArray(fc.constantFrom(...TOKEN_SCOPES), { minLength: 1, maxLength: 4 }),
    {
      nil: undefined,
    },
  ),
  allowedIps: fc.option(fc.array(ipArb, { minLength: 1, maxLength: 20 }), { nil: undefined }),
});
