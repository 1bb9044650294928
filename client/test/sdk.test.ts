import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as ed from "@noble/ed25519";
import { newUser, signBytes } from "../../test/support/signing.js";
import { Code, createTokenClient, isWellFormedToken, TokenApiError } from "../src/sdk/node.js";
import { apiError, datesIn, harnessSuite, TRANSPORTS } from "./support/sdk-harness.js";

describe("SDK round trips over every transport", () => {
  const h = harnessSuite();

  for (const transport of TRANSPORTS) {
    it(`${transport}: creates a named token, then deletes it`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      assert.equal(client.transport, transport);
      const from = Date.now();
      const created = await client.createToken({
        userId: user.userId,
        name: `bot-${transport}`,
        expiresIn: 3600,
      });
      assert.ok(isWellFormedToken(created.token));
      assert.match(created.id, /^[A-Za-z0-9_-]{16}$/);
      assert.ok(datesIn(3600, from, Date.now()).includes(created.expiresAt), created.expiresAt);
      assert.equal(
        await client.deleteToken({ userId: user.userId, tokenId: created.id }),
        undefined,
      );
      // Gone: a second delete is refused.
      await assert.rejects(
        client.deleteToken({ userId: user.userId, tokenId: created.id }),
        apiError(Code.NotFound, "tokenId: no such token", transport === "rest" ? 404 : undefined),
      );
    });

    it(`${transport}: creates a session token (no optional field) and a bigint lifetime`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const from = Date.now();
      const session = await client.createToken({ userId: user.userId });
      assert.ok(datesIn(604_800, from, Date.now()).includes(session.expiresAt));
      const long = await client.createToken({
        userId: user.userId,
        name: "yearly",
        expiresIn: 31_536_000n,
      });
      assert.ok(datesIn(31_536_000, from, Date.now()).includes(long.expiresAt));
      await client.deleteToken({ userId: user.userId, tokenId: session.id });
      await client.deleteToken({ userId: user.userId, tokenId: long.id });
    });

    it(`${transport}: sends and signs userId verbatim (upper case)`, async () => {
      const user = await h.user();
      const userId = user.userId.toUpperCase();
      const client = h.client(transport, user);
      const created = await client.createToken({ userId, name: "UPPER" });
      // Identity is case-insensitive on the service, so the lower-case form deletes it.
      await client.deleteToken({ userId: user.userId, tokenId: created.id });
    });
  }
});

describe("SDK typed errors", () => {
  const h = harnessSuite();

  for (const transport of TRANSPORTS) {
    const status = (http: number) => (transport === "rest" ? http : undefined);

    it(`${transport}: duplicate name is ALREADY_EXISTS (409 on REST)`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const first = await client.createToken({ userId: user.userId, name: "dup" });
      await assert.rejects(
        client.createToken({ userId: user.userId, name: "dup" }),
        apiError(
          Code.AlreadyExists,
          "name: a live token of this user already has this name",
          status(409),
        ),
      );
      await client.deleteToken({ userId: user.userId, tokenId: first.id });
    });

    it(`${transport}: a create whose answer was lost, resent as it was, names its token (createdTokenId) and the delete frees the name`, async () => {
      const user = await h.user();
      const firstAttempt = Date.now();
      // The same `now` makes the identical signed request (Ed25519 is deterministic).
      const client = h.client(transport, user, { now: () => firstAttempt });
      const lost = await client.createToken({ userId: user.userId, name: "lost", expiresIn: 60 });
      const resent = await client
        .createToken({ userId: user.userId, name: "lost", expiresIn: 60 })
        .then(
          () => assert.fail("the resent create succeeded"),
          (err: unknown) => err,
        );
      assert.ok(resent instanceof TokenApiError, `not a TokenApiError: ${String(resent)}`);
      assert.equal(resent.code, Code.AlreadyExists);
      assert.equal(resent.httpStatus, status(409));
      assert.equal(resent.createdTokenId, lost.id);
      assert.ok(!resent.message.includes(lost.token), "the token is never shown again");
      await h.client(transport, user).deleteToken({
        userId: user.userId,
        tokenId: resent.createdTokenId ?? "",
      });
      const again = await h
        .client(transport, user)
        .createToken({ userId: user.userId, name: "lost" });
      await h.client(transport, user).deleteToken({ userId: user.userId, tokenId: again.id });
    });

    it(`${transport}: unknown token is NOT_FOUND`, async () => {
      const user = await h.user();
      await assert.rejects(
        h.client(transport, user).deleteToken({ userId: user.userId, tokenId: "no-such-token" }),
        apiError(Code.NotFound, "tokenId: no such token", status(404)),
      );
    });

    it(`${transport}: a key that is not registered is UNAUTHENTICATED "Invalid signature"`, async () => {
      const stranger = await newUser();
      const client = h.client(transport, stranger);
      await assert.rejects(
        client.createToken({ userId: stranger.userId }),
        apiError(Code.Unauthenticated, "Invalid signature", status(401)),
      );
      await assert.rejects(
        client.deleteToken({ userId: stranger.userId, tokenId: "x" }),
        apiError(Code.Unauthenticated, "Invalid signature", status(401)),
      );
    });

    it(`${transport}: the now option sets the signed timestamp (a skewed clock is refused)`, async () => {
      const user = await h.user();
      const client = h.client(transport, user, { now: () => Date.now() - 10 * 60_000 });
      await assert.rejects(
        client.createToken({ userId: user.userId }),
        apiError(Code.Unauthenticated, "Signature expired", status(401)),
      );
    });

    it(`${transport}: a field the service refuses is INVALID_ARGUMENT with its message`, async () => {
      const user = await h.user();
      await assert.rejects(
        h.client(transport, user).createToken({ userId: user.userId, expiresIn: 0 }),
        apiError(Code.InvalidArgument, "expiresIn: must be greater than 0", status(400)),
      );
    });

    it(`${transport}: a service that cannot be reached is UNAVAILABLE`, async () => {
      const user = await h.user();
      // Port 1 (tcpmux) is privileged and never served here: connection refused.
      const client = createTokenClient({
        baseUrl: "http://127.0.0.1:1",
        transport,
        signer: { privateKey: user.secretKey },
      });
      try {
        await assert.rejects(client.createToken({ userId: user.userId }), (err) => {
          assert.ok(err instanceof TokenApiError);
          assert.equal(err.code, Code.Unavailable);
          return true;
        });
      } finally {
        client.close();
      }
    });

    it(`${transport}: an aborted call is CANCELLED`, async () => {
      const user = await h.user();
      await assert.rejects(
        h.client(transport, user).createToken({
          userId: user.userId,
          signal: AbortSignal.abort(),
        }),
        (err) => err instanceof TokenApiError && err.code === Code.Canceled,
      );
    });
  }

  it("checks integers locally, since a rounded JSON number would not match its signature", async () => {
    const user = await h.user();
    const client = h.client("rest", user);
    for (const expiresIn of [1.5, Number.MAX_SAFE_INTEGER + 1, 2n ** 53n]) {
      await assert.rejects(
        client.createToken({ userId: user.userId, expiresIn }),
        apiError(Code.InvalidArgument, /^expiresIn: must be an integer/),
      );
    }
  });

  it("refuses a malformed private key when the client is made", () => {
    for (const privateKey of [new Uint8Array(31), "ab".repeat(31), "zz".repeat(32)]) {
      assert.throws(
        () => createTokenClient({ baseUrl: h.service.publicUrl, signer: { privateKey } }),
        TypeError,
      );
    }
  });
});

describe("SDK RESOURCE_EXHAUSTED carries retryAfterSeconds", () => {
  const h = harnessSuite({ maxActive: 1 });

  for (const transport of TRANSPORTS) {
    it(transport, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const only = await client.createToken({ userId: user.userId, expiresIn: 60 });
      await assert.rejects(client.createToken({ userId: user.userId }), (err) => {
        assert.ok(err instanceof TokenApiError);
        assert.equal(err.code, Code.ResourceExhausted);
        assert.equal(err.codeName, "RESOURCE_EXHAUSTED");
        assert.equal(err.httpStatus, transport === "rest" ? 429 : undefined);
        const retry = err.retryAfterSeconds ?? 0;
        assert.ok(retry >= 1 && retry <= 60, `retryAfterSeconds ${err.retryAfterSeconds}`);
        return true;
      });
      await client.deleteToken({ userId: user.userId, tokenId: only.id });
    });
  }
});

describe("SDK callback signer", () => {
  const h = harnessSuite();

  for (const transport of TRANSPORTS) {
    it(`${transport}: signs the exact message elsewhere, answering hex or bytes`, async () => {
      const user = await h.user();
      const messages: string[] = [];
      const fixed = Date.now();
      let asBytes = false;
      const client = createTokenClient({
        baseUrl: h.service.publicUrl,
        transport,
        now: () => fixed,
        // Stands in for a hardware or remote signer: sees only the message bytes.
        signer: async (message) => {
          messages.push(new TextDecoder().decode(message));
          asBytes = !asBytes;
          return asBytes
            ? ed.signAsync(message, user.secretKey)
            : (await signBytes(user.secretKey, message)).toUpperCase();
        },
      });
      try {
        const created = await client.createToken({
          userId: user.userId,
          name: "remote",
          expiresIn: 3600,
        });
        await client.deleteToken({ userId: user.userId, tokenId: created.id });
        assert.deepEqual(messages, [
          `createToken:${fixed}:3600:remote:${user.userId}`,
          `deleteToken:${fixed}:${created.id}:${user.userId}`,
        ]);
      } finally {
        client.close();
      }
    });
  }

  it("leaves empty slots for omitted fields", async () => {
    const user = await h.user();
    const messages: string[] = [];
    const client = createTokenClient({
      baseUrl: h.service.publicUrl,
      signer: async (message) => {
        messages.push(new TextDecoder().decode(message));
        return signBytes(user.secretKey, message);
      },
    });
    const session = await client.createToken({ userId: user.userId });
    const named = await client.createToken({ userId: user.userId, name: "n:1" });
    for (const tokenId of [session.id, named.id]) {
      await client.deleteToken({ userId: user.userId, tokenId });
    }
    assert.match(messages[0] ?? "", new RegExp(`^createToken:\\d+:::${user.userId}$`));
    assert.match(messages[1] ?? "", new RegExp(`^createToken:\\d+::n:1:${user.userId}$`));
  });

  it("a callback answering something that is not a signature fails locally, before sending", async () => {
    const user = await h.user();
    const client = createTokenClient({
      baseUrl: "http://127.0.0.1:1",
      signer: async () => "0x1234",
    });
    await assert.rejects(client.createToken({ userId: user.userId }), TypeError);
  });
});
