import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { createTokenMessage, deleteTokenMessage } from "@perps/token-client/protocol";
import type { JsonSchema, OpenApiDocument } from "../../src/openapi/openapi-document.js";
import { componentValidator } from "../support/openapi-validators.js";
import { newUser, signBytes, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// The served OpenAPI document describes the running service: a client that
// generates requests from its schema, valid values only (boundaries
// included), is never refused.

/** Not the default (365 days): the served document must say this one. */
const MAX_LIFETIME_SECONDS = 30 * 86_400;

describe("the served OpenAPI document", () => {
  let redis: TestRedis;
  let service: TestService;
  let document: OpenApiDocument;
  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({
      redis: redis.topology,
      tokenMaxLifetimeSeconds: MAX_LIFETIME_SECONDS,
      // High: the test sends many signed calls and keeps many tokens per user.
      tokenRateLimitPerMinute: 100_000,
      tokenMaxActivePerUser: 10_000,
    });
    const res = await fetch(`${service.publicUrl}/openapi.json`);
    assert.equal(res.status, 200);
    document = (await res.json()) as OpenApiDocument;
  });
  after(async () => {
    await service.stop();
    await redis.dispose();
  });

  const schemaOf = (name: string): JsonSchema => {
    const schema = document.components?.schemas?.[`perps.token.v1.${name}`];
    assert.ok(schema !== undefined && typeof schema === "object", name);
    return schema as JsonSchema;
  };

  it("states the configured limits", () => {
    const expiresIn = schemaOf("CreateTokenRequest").properties?.expiresIn;
    assert.equal(expiresIn?.maximum, MAX_LIFETIME_SECONDS);
    assert.match(expiresIn?.description ?? "", new RegExp(`at most ${MAX_LIFETIME_SECONDS} `));
    assert.match(JSON.stringify(document.paths), /this service allows 100000 per minute/);
    assert.match(JSON.stringify(document.paths), /this service allows 10000: TOKEN_MAX/);
  });

  it("every request generated from its schema, boundary values included, is accepted", async () => {
    const create = schemaOf("CreateTokenRequest");
    const expiresIn = create.properties?.expiresIn;
    const name = create.properties?.name;
    const min = Number(expiresIn?.minimum);
    const max = Number(expiresIn?.maximum);
    // Above this `name` is required (the schema's if/then).
    const condition = create.if as JsonSchema | undefined;
    const unnamedMax = Number(condition?.properties?.expiresIn?.exclusiveMinimum);
    const [minName, maxName] = [Number(name?.minLength), Number(name?.maxLength)];
    assert.ok([min, max, unnamedMax, minName, maxName].every(Number.isSafeInteger));

    // The user id's forms the schema allows: any case, the nil and the all-f UUID.
    const lower = randomUUID();
    const upper = randomUUID();
    const users: { sent: string; user: TestUser }[] = [];
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    try {
      for (const [registered, sent] of [
        [lower, lower],
        [upper, upper.toUpperCase()],
        ["00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"],
        ["ffffffff-ffff-ffff-ffff-ffffffffffff", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"],
      ] as const) {
        const user = await newUser(registered);
        await keys.putUserKey({ userId: registered, publicKey: user.publicKey });
        users.push({ sent, user });
      }
    } finally {
      keys.close();
    }

    // Names of the shortest and longest length, in one-, two- and four-byte characters.
    const fill = (char: string, length: number) => char.repeat(length);
    const variants = (k: number): { expiresIn?: number; name?: string }[] => [
      { expiresIn: min, name: fill(String.fromCharCode(97 + k), minName) },
      { expiresIn: max, name: fill(String.fromCharCode(65 + k), maxName) },
      { expiresIn: unnamedMax },
      { expiresIn: unnamedMax + 1, name: fill("éèêë"[k] ?? "é", maxName) },
      {},
      { expiresIn: min },
      { name: fill(["😀", "🚀", "🔑", "📈"][k] ?? "😀", maxName) },
      { expiresIn: max, name: `k${k}-${"z".repeat(maxName - 3)}` },
    ];
    const validator = componentValidator(document);
    const skews = [0, -100_000, 100_000]; // within the documented ±2 minutes
    let sent = 0;
    for (const [k, { sent: userId, user }] of users.entries()) {
      for (const [i, fields] of variants(k).entries()) {
        const timestamp = BigInt(Date.now() + (skews[i % skews.length] ?? 0));
        const signature = await signBytes(
          user.secretKey,
          createTokenMessage({
            timestamp,
            userId,
            expiresIn: fields.expiresIn === undefined ? undefined : BigInt(fields.expiresIn),
            name: fields.name,
          }),
        );
        const body = { signature, timestamp: Number(timestamp), userId, ...fields };
        assert.equal(validator.errors("perps.token.v1.CreateTokenRequest", body), "", "generated");
        const res = await fetch(`${service.publicUrl}/user/tokens`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const answer = (await res.json()) as { id: string };
        assert.equal(res.status, 201, `${JSON.stringify(fields)}: ${JSON.stringify(answer)}`);
        sent++;

        const deleteAt = BigInt(Date.now());
        const deleteBody = {
          signature: await signBytes(
            user.secretKey,
            deleteTokenMessage({ timestamp: deleteAt, tokenId: answer.id, userId }),
          ),
          timestamp: Number(deleteAt),
          userId,
          tokenId: answer.id,
        };
        assert.equal(validator.errors("perps.token.v1.DeleteTokenRequest", deleteBody), "");
        const deleted = await fetch(`${service.publicUrl}/user/tokens`, {
          method: "DELETE",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(deleteBody),
        });
        assert.equal(deleted.status, 200, await deleted.text());
      }
    }
    assert.equal(sent, users.length * variants(0).length);
  });
});
