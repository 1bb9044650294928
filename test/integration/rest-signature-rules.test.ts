import { describe, it } from "node:test";
import {
  createFields,
  DEFAULT_EXPIRES_IN,
  deleteFields,
  type Fields,
  UNAUTHENTICATED,
  withChanges,
} from "../support/rest-contract-bodies.js";
import {
  assertCreated,
  assertDeleted,
  assertError,
  assertExpired,
} from "../support/rest-contract-checks.js";
import { restContractSuite } from "../support/rest-contract-suite.js";
import { newUser, signText } from "../support/signing.js";

// The REST contract of POST/DELETE /user/tokens, continued (rest-contract.test.ts).

describe("REST contract of /user/tokens", () => {
  const { registeredUser, post, del, created } = restContractSuite();

  describe("rule 2: time window → 401 Signature expired", () => {
    for (const offset of [-121_000, 121_000]) {
      it(`refuses a timestamp ${offset / 1000} s from server time, for create and delete`, async () => {
        const user = await registeredUser();
        const token = await created(user);
        const timestamp = Date.now() + offset;
        assertExpired(await post(await createFields(user, { timestamp })));
        assertExpired(await del(await deleteFields(user, token.id, { timestamp })));
        // The refused delete left the token in place.
        assertDeleted(await del(await deleteFields(user, token.id)));
      });
    }

    for (const offset of [-115_000, 115_000]) {
      it(`accepts a timestamp ${offset / 1000} s from server time, for create and delete`, async () => {
        const user = await registeredUser();
        const token = await created(user, { timestamp: Date.now() + offset });
        assertDeleted(
          await del(await deleteFields(user, token.id, { timestamp: Date.now() + offset })),
        );
      });
    }

    it("checks the window before the signature", async () => {
      const user = await registeredUser();
      const fields = await createFields(user, { timestamp: Date.now() - 200_000 });
      const res = await post(withChanges(fields, { signature: "0".repeat(128) }));
      assertExpired(res);
    });
  });

  describe("rule 3: signature → 401 Invalid signature", () => {
    it("omitted optional fields leave empty slots in the signed message", async () => {
      const user = await registeredUser();
      const cases: { message: (t: number) => string; fields: Fields; lifetime: number }[] = [
        {
          message: (t) => `createToken:${t}:3600::${user.userId}`,
          fields: { expiresIn: 3600 },
          lifetime: 3600,
        },
        {
          message: (t) => `createToken:${t}::slot:${user.userId}`,
          fields: { name: "slot" },
          lifetime: DEFAULT_EXPIRES_IN,
        },
        {
          message: (t) => `createToken:${t}:::${user.userId}`,
          fields: {},
          lifetime: DEFAULT_EXPIRES_IN,
        },
      ];
      for (const c of cases) {
        const timestamp = Date.now();
        const signature = await signText(user.secretKey, c.message(timestamp));
        const res = await post({ signature, timestamp, userId: user.userId, ...c.fields });
        assertCreated(res, c.lifetime, timestamp, Date.now());
      }
    });

    it('refuses a message with "604800" filled into the omitted expiresIn slot', async () => {
      const user = await registeredUser();
      const timestamp = Date.now();
      for (const [message, fields] of [
        [`createToken:${timestamp}:604800::${user.userId}`, {}],
        [`createToken:${timestamp}:604800:filled:${user.userId}`, { name: "filled" }],
      ] as const) {
        const signature = await signText(user.secretKey, message);
        const res = await post({ signature, timestamp, userId: user.userId, ...fields });
        assertError(res, 401, UNAUTHENTICATED, "Invalid signature");
      }
    });

    it("refuses an explicit expiresIn 604800 signed with an empty slot", async () => {
      const user = await registeredUser();
      const timestamp = Date.now();
      const signature = await signText(user.secretKey, `createToken:${timestamp}:::${user.userId}`);
      const res = await post({ signature, timestamp, userId: user.userId, expiresIn: 604_800 });
      assertError(res, 401, UNAUTHENTICATED, "Invalid signature");
    });

    it("refuses a well-formed signature that does not verify, and a tampered field", async () => {
      const user = await registeredUser();
      const fields = await createFields(user, { expiresIn: 60 });
      assertError(
        await post(withChanges(fields, { signature: "ab".repeat(64) })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      assertError(
        await post(withChanges(fields, { expiresIn: 61 })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      assertError(
        await del(withChanges(await deleteFields(user, "a"), { tokenId: "b" })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
    });

    it("gives the same answer for an unknown user and for another user's key", async () => {
      const stranger = await newUser();
      assertError(
        await post(await createFields(stranger)),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      assertError(
        await del(await deleteFields(stranger, "t")),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
      const alice = await registeredUser();
      const mallory = await registeredUser();
      assertError(
        await post(await createFields(mallory, { userId: alice.userId })),
        401,
        UNAUTHENTICATED,
        "Invalid signature",
      );
    });
  });
});
