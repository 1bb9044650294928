import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import {
  ALREADY_EXISTS,
  BEARER_CHALLENGE,
  createFields,
  DEFAULT_EXPIRES_IN,
  deleteFields,
  INVALID_TOKEN_CHALLENGE,
  jsonText,
  MAX_BODY_BYTES,
  MAX_LIFETIME,
  NOT_FOUND,
  parseJson,
  UNAUTHENTICATED,
  UNAVAILABLE,
  uuidWith,
  withChanges,
} from "../support/rest-contract-bodies.js";
import {
  assertCreated,
  assertDeleted,
  assertError,
  describeResponse,
} from "../support/rest-contract-checks.js";
import { restContractSuite } from "../support/rest-contract-suite.js";

// The REST contract of POST/DELETE /user/tokens (spec token-api.md and the
// issue's rules), checked over real HTTP with fetch and node:http2. Request
// bodies and signed messages are written here by hand, independent of the
// service's own code, so the test pins the wire contract.

describe("REST contract of /user/tokens", () => {
  const { redis, service, registeredUser, rest, post, list, del, created } = restContractSuite();

  describe("success answers", () => {
    it("create → 201 {expiresAt, id, token}, expiresAt 7 days ahead by default", async () => {
      const user = await registeredUser();
      await created(user);
    });

    for (const [expiresIn, name] of [
      [1, undefined],
      [86_400, undefined],
      [DEFAULT_EXPIRES_IN, undefined],
      [DEFAULT_EXPIRES_IN + 1, "week and a second"],
      [MAX_LIFETIME, "a year"],
    ] as const) {
      it(`create with expiresIn ${expiresIn} → expiresAt is the UTC date of now + ${expiresIn} s`, async () => {
        const user = await registeredUser();
        await created(user, { expiresIn, ...(name === undefined ? {} : { name }) });
      });
    }

    it("delete → 200 with the body exactly {}", async () => {
      const user = await registeredUser();
      const token = await created(user, { name: "to delete" });
      const res = await del(await deleteFields(user, token.id));
      assertDeleted(res);
      assert.equal(res.text, "{}");
    });

    it("accepts application/json; charset=utf-8 and Application/JSON", async () => {
      const user = await registeredUser();
      for (const contentType of ["application/json; charset=utf-8", "Application/JSON"]) {
        const sentAt = Date.now();
        const res = await rest("POST", jsonText(await createFields(user)), { contentType });
        assertCreated(res, DEFAULT_EXPIRES_IN, sentAt, Date.now());
      }
    });

    it("ignores unknown fields (including __proto__ and nested values)", async () => {
      const user = await registeredUser();
      const fields = withChanges(await createFields(user, { name: "extra" }), {
        foo: 1,
        nested: { a: [1, "two", null] },
        user_token: "x",
      });
      const text = `${jsonText(fields).slice(0, -1)},"__proto__":{"admin":true}}`;
      const sentAt = Date.now();
      const res = await rest("POST", text);
      const token = assertCreated(res, DEFAULT_EXPIRES_IN, sentAt, Date.now());
      const delText = jsonText(
        withChanges(await deleteFields(user, token.id), { unknown: { deep: true } }),
      );
      assertDeleted(await rest("DELETE", delText));
    });

    it("accepts a body of exactly 64 KiB", async () => {
      const user = await registeredUser();
      const fields = await createFields(user);
      const base = jsonText(withChanges(fields, { padding: "" }));
      const padding = "p".repeat(MAX_BODY_BYTES - Buffer.byteLength(base));
      const text = jsonText(withChanges(fields, { padding }));
      assert.equal(Buffer.byteLength(text), MAX_BODY_BYTES);
      const sentAt = Date.now();
      assertCreated(await rest("POST", text), DEFAULT_EXPIRES_IN, sentAt, Date.now());
    });
  });

  describe("userId forms, end to end over REST", () => {
    const accepted: [string, string][] = [
      ...["1", "2", "3", "4", "5", "6", "7", "8"].map((v): [string, string] => [
        `version digit ${v}`,
        uuidWith(v, "9"),
      ]),
      ...["8", "9", "a", "b", "A", "B"].map((v): [string, string] => [
        `variant digit ${v}`,
        uuidWith("7", v),
      ]),
      ["the nil UUID", "00000000-0000-0000-0000-000000000000"],
      ["the max UUID", "ffffffff-ffff-ffff-ffff-ffffffffffff"],
      ["the max UUID in uppercase", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"],
      ["an uppercase UUID", randomUUID().toUpperCase()],
    ];
    for (const [name, userId] of accepted) {
      it(`accepts ${name} (${userId}): create 201, delete 200`, async () => {
        const user = await registeredUser(userId);
        const token = await created(user);
        assertDeleted(await del(await deleteFields(user, token.id)));
      });
    }

    it("identity is case-insensitive; the signature covers the userId verbatim", async () => {
      const lower = randomUUID();
      const upper = lower.toUpperCase();
      // Key registered under the lowercase form, used with the uppercase one.
      const user = await registeredUser(lower);
      const token = await created(user, { userId: upper, name: "case" });
      // The name is taken for the other spelling too.
      assertError(
        await post(await createFields(user, { userId: lower, name: "case" })),
        409,
        ALREADY_EXISTS,
      );
      // Signed over lowercase, sent as uppercase → the signature does not verify.
      const signedLower = await createFields(user, { userId: lower });
      assertError(
        await post(withChanges(signedLower, { userId: upper })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      // Created with uppercase, deleted with lowercase.
      assertDeleted(await del(await deleteFields(user, token.id, { userId: lower })));
      assertError(await del(await deleteFields(user, token.id, { userId: upper })), 404, NOT_FOUND);
    });
  });

  describe("rule 4: business rules", () => {
    it("a name held by a live token → 409 ALREADY_EXISTS", async () => {
      const user = await registeredUser();
      const first = await created(user, { name: "bot" });
      assertError(await post(await createFields(user, { name: "bot" })), 409, ALREADY_EXISTS);
      // Names are per user, and free again once the token is deleted.
      await created(await registeredUser(), { name: "bot" });
      assertDeleted(await del(await deleteFields(user, first.id)));
      await created(user, { name: "bot" });
    });

    it("an unknown or already deleted tokenId → 404 NOT_FOUND", async () => {
      const user = await registeredUser();
      assertError(await del(await deleteFields(user, "no-such-token")), 404, NOT_FOUND);
      const token = await created(user);
      assertDeleted(await del(await deleteFields(user, token.id)));
      assertError(await del(await deleteFields(user, token.id)), 404, NOT_FOUND);
    });

    it("the same create again while its token is live → 409 with a google.rpc.ErrorInfo naming it", async () => {
      const user = await registeredUser();
      const sentAt = Date.now();
      const fields = await createFields(user, { name: "replayed", timestamp: sentAt });
      const first = assertCreated(await post(fields), DEFAULT_EXPIRES_IN, sentAt, Date.now());
      const again = await post(fields);
      assert.equal(again.status, 409, describeResponse(again));
      assert.match(again.headers.get("content-type") ?? "", /^application\/json(;|$)/);
      assert.deepEqual(parseJson(again.text), {
        code: ALREADY_EXISTS,
        message: `Signature already used: this request created token ${first.id}`,
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "TOKEN_ALREADY_CREATED",
            domain: "perps-tokens",
            metadata: { tokenId: first.id },
          },
        ],
      });
      assert.ok(!again.text.includes(first.token), "the token is never sent again");
      // A refused request (the name is taken) is remembered too: sent again, it is used.
      const refused = await createFields(user, { name: "replayed", timestamp: sentAt - 1 });
      assertError(await post(refused), 409, ALREADY_EXISTS, /^name: /);
      assertError(await post(refused), 401, UNAUTHENTICATED, "Signature already used");
    });

    it("another user's tokenId → 404 NOT_FOUND, and the token survives", async () => {
      const alice = await registeredUser();
      const bob = await registeredUser();
      const token = await created(alice, { name: "alice's" });
      assertError(await del(await deleteFields(bob, token.id)), 404, NOT_FOUND);
      assertDeleted(await del(await deleteFields(alice, token.id)));
    });
  });

  describe("GET /user/tokens (ListTokens, bearer token)", () => {
    it("→ 200 {tokens: [{id, name, expiresAt}]}, ordered by expiry, then name in UTF-8 bytes, session tokens left out", async () => {
      const user = await registeredUser();
      const session = await created(user);
      const zeta = await created(user, { name: "zeta", expiresIn: 3600 });
      const alpha = await created(user, { name: "Alpha" });
      const emoji = await created(user, { name: "😀" });
      const res = await list(`Bearer ${session.token}`);
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json(;|$)/);
      const body = parseJson(res.text) as { tokens: Record<string, unknown>[] };
      // Since issue 42 each entry also says its scopes, its creation and its exact expiry.
      const instant = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
      const entries = body.tokens.map(
        ({ scopes, createdAt, expiresAtTime, lastUsedAt, ...entry }) => {
          assert.equal(lastUsedAt, undefined, "none of these was used");
          assert.deepEqual(scopes, ["read", "trade"]);
          assert.match(String(createdAt), instant);
          assert.match(String(expiresAtTime), instant);
          assert.equal(String(expiresAtTime).slice(0, 10), entry.expiresAt);
          return entry;
        },
      );
      assert.deepEqual(
        { ...body, tokens: entries },
        {
          tokens: [
            { id: zeta.id, name: "zeta", expiresAt: zeta.expiresAt },
            { id: alpha.id, name: "Alpha", expiresAt: alpha.expiresAt },
            { id: emoji.id, name: "😀", expiresAt: emoji.expiresAt },
          ],
        },
      );
      // The bearer scheme name is case-insensitive (RFC 7235).
      assert.equal((await list(`bearer ${zeta.token}`)).text, res.text);
    });

    it('→ 200 {"tokens": []} for a user with only session tokens', async () => {
      const user = await registeredUser();
      const session = await created(user);
      const res = await list(`Bearer ${session.token}`);
      assert.equal(res.status, 200);
      assert.equal(res.text, '{"tokens":[]}');
    });

    for (const [name, header] of [
      ["no Authorization header", undefined],
      ["Basic credentials", "Basic dXNlcjpwYXNz"],
    ] as const) {
      it(`${name} → 401 with WWW-Authenticate: ${BEARER_CHALLENGE}`, async () => {
        const res = await list(header);
        assertError(res, 401, UNAUTHENTICATED);
        assert.equal(res.headers.get("www-authenticate"), BEARER_CHALLENGE);
      });
    }

    it('a malformed, unknown, deleted or expired token → the same 401 with error="invalid_token"', async () => {
      const user = await registeredUser();
      const deleted = await created(user, { name: "deleted" });
      assertDeleted(await del(await deleteFields(user, deleted.id)));
      const expired = await created(user, { name: "expired", expiresIn: 1 });
      const live = await created(user, { name: "live" });
      // Another character in the secret part, checksum unchanged: malformed.
      const broken = `${live.token.slice(0, 60)}${live.token[60] === "A" ? "B" : "A"}${live.token.slice(61)}`;
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const answers = new Set<string>();
      for (const token of ["pt_abc", broken, "x".repeat(89), deleted.token, expired.token, ""]) {
        const res = await list(`Bearer ${token}`);
        assertError(res, 401, UNAUTHENTICATED);
        assert.equal(res.headers.get("www-authenticate"), INVALID_TOKEN_CHALLENGE, token);
        answers.add(res.text);
      }
      assert.equal(answers.size, 1, [...answers].join("\n"));
      // The live token still lists, without the deleted or expired one.
      assert.deepEqual(
        (
          parseJson((await list(`Bearer ${live.token}`)).text) as { tokens: { name: string }[] }
        ).tokens.map((t) => t.name),
        ["live"],
      );
    });
  });

  // Last: stops and restarts Redis.

  describe("Redis unavailable", () => {
    it("→ 503 UNAVAILABLE with the JSON error shape, then recovers", async () => {
      const user = await registeredUser();
      const fields = await createFields(user, { name: "outage" });
      const listed = await created(user, { name: "listed" });
      await redis.stop();
      try {
        assertError(await post(fields), 503, UNAVAILABLE);
        assertError(await list(`Bearer ${listed.token}`), 503, UNAVAILABLE);
      } finally {
        await redis.restart();
      }
      const deadline = Date.now() + 5000;
      // "ready", not "serving from cache" (200 too: the tokens checked earlier in this file are
      // held while Redis is away, token-cache-grace.test.ts).
      const ready = async () =>
        ((await (await fetch(`${service.publicUrl}/readyz`)).json()) as { status: string }).status;
      while ((await ready()) !== "ready") {
        assert.ok(Date.now() < deadline, "service not ready again within 5 s");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await created(user, { name: "outage" });
    });
  });
});
