import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type DescMessage, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  CreateTokenRequestSchema,
  DeleteTokenRequestSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  DeleteUserKeyRequestSchema,
  PutUserKeyRequestSchema,
} from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { isWellFormedToken } from "@perps/token-client/protocol";
import fc from "fast-check";
import {
  applyByteMutation,
  byteMutation,
  CLIENT_SIDE_CODES,
  decodesTo,
  grpcContext,
  rawUnary,
  SERVER_SIDE_CODES,
} from "../support/hostile-grpc-bytes.js";
import {
  assertCreated,
  assertRestError,
  isRecord,
  MAX_BODY_BYTES,
  PATH,
  parseOrUndefined,
  runs,
  SOME_USER_ID,
  show,
} from "../support/hostile-input-checks.js";
import { hostileInputSuite } from "../support/hostile-input-suite.js";
import {
  bodyMutations,
  hostileValue,
  isUnchangedRequest,
  mutatedBody,
  nested,
  objectText,
} from "../support/hostile-json-bodies.js";
import { newUser, signedCreate, signedDelete } from "../support/signing.js";

// Hostile input: property-based fuzzing (fast-check) of the REST mapping, the
// Connect JSON protocol and gRPC with random and mutated requests. Whatever
// arrives, the answer is a 4xx / a client-side gRPC code (or a 2xx for a
// request that really is valid), never a 5xx, INTERNAL or a crash, and the
// service is healthy afterwards. Plus one compact test per way of forging a
// request. Seeds are fixed (override all of them with FUZZ_SEED=<n> to
// explore); run counts are bounded so the file runs in well under a minute.

describe("hostile input", () => {
  const suite = hostileInputSuite();
  const { service, grpcTokens, rawInternal, rawPublic, registeredUser, http } = suite;
  const { fuzzUser, timestamp, uniqueName, validCreateFields, validDeleteFields } = suite;

  describe("REST fuzzing of /user/tokens", () => {
    const createFieldNames = ["signature", "timestamp", "userId", "expiresIn", "name"];
    const deleteFieldNames = ["signature", "timestamp", "tokenId", "userId"];

    it("POST with mutated signed bodies: 201 only when still the valid request, else a 4xx error body", async () => {
      let valid = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.record({ expiresIn: fc.boolean(), name: fc.boolean() }),
          bodyMutations,
          async (optional, mutations) => {
            const fields = await validCreateFields(await fuzzUser(), optional);
            const body = mutatedBody(fields, mutations);
            const res = await http(service.publicUrl, "POST", PATH, body);
            const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for POST ${show(body)}`;
            if (isUnchangedRequest(body, fields, createFieldNames)) {
              valid++;
              assertCreated(res, 201, context);
            } else {
              refused++;
              assertRestError(res, context);
            }
          },
        ),
        runs(0x5eed_0001, 600),
      );
      // The mix exercises both sides of the oracle.
      assert.ok(valid >= 10 && refused >= 200, `valid ${valid}, refused ${refused}`);
    });

    it("DELETE with mutated signed bodies: 200 {} only when still the valid request, else a 4xx error body", async () => {
      let valid = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(bodyMutations, async (mutations) => {
          const fields = await validDeleteFields(await fuzzUser());
          const body = mutatedBody(fields, mutations);
          const res = await http(service.publicUrl, "DELETE", PATH, body);
          const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for DELETE ${show(body)}`;
          if (isUnchangedRequest(body, fields, deleteFieldNames)) {
            valid++;
            assert.equal(res.status, 200, context);
            assert.equal(res.text, "{}", context);
          } else {
            refused++;
            assertRestError(res, context);
          }
        }),
        runs(0x5eed_0002, 300),
      );
      assert.ok(valid >= 5 && refused >= 100, `valid ${valid}, refused ${refused}`);
    });

    it("random bodies, bytes, content types, methods and paths: always a 4xx error body", async () => {
      const fieldKey = fc.constantFrom(...createFieldNames, ...deleteFieldNames, "user_id");
      const body = fc.oneof(
        { arbitrary: fc.jsonValue().map((v) => JSON.stringify(v) ?? "null"), weight: 3 },
        {
          // Objects over the request's own keys with hostile values: strict typing.
          arbitrary: fc
            .array(fc.record({ key: fieldKey, value: hostileValue }), { maxLength: 6 })
            .map((ms) =>
              objectText(ms.map((m) => ({ key: JSON.stringify(m.key), value: m.value }))),
            ),
          weight: 4,
        },
        { arbitrary: fc.string({ unit: "binary", maxLength: 200 }), weight: 1 },
        { arbitrary: hostileValue, weight: 2 },
        { arbitrary: fc.uint8Array({ maxLength: 300 }), weight: 2 },
        {
          arbitrary: fc.constantFrom(
            `{"signature":"${"a".repeat(MAX_BODY_BYTES)}"}`,
            nested(100_000, "[", "", "]", true),
            nested(20_000, "[", "", "]", false),
            "\ufeff{}",
            "",
          ),
          weight: 1,
        },
      );
      const method = fc.oneof(
        { arbitrary: fc.constantFrom("POST", "DELETE"), weight: 8 },
        {
          arbitrary: fc.constantFrom("PUT", "PATCH", "GET", "HEAD", "OPTIONS", "PURGE"),
          weight: 1,
        },
      );
      const contentType = fc.oneof(
        { arbitrary: fc.constant("application/json"), weight: 8 },
        {
          arbitrary: fc.constantFrom(
            null,
            "",
            "text/plain",
            "application/json; charset=utf-8",
            "application/json; charset=latin1",
            'APPLICATION/JSON;CHARSET="UTF-8"',
            "application/jsonx",
            "application/json-patch+json",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/grpc",
            "application/proto",
            "application/connect+json",
            "application/json; charset=utf-16",
            ";;;",
          ),
          weight: 2,
        },
      );
      const path = fc.oneof(
        { arbitrary: fc.constant(PATH), weight: 8 },
        {
          arbitrary: fc.constantFrom(
            "/user/tokens/",
            "/user/tokens?userId=x&timestamp=1",
            "/USER/TOKENS",
            "/user//tokens",
            "/user/tokens/%00",
            "/user/%ff",
            "/user/tokens/../tokens",
            "/",
            `/${"a".repeat(5000)}`,
          ),
          weight: 1,
        },
      );
      await fc.assert(
        fc.asyncProperty(
          body,
          method,
          contentType,
          path,
          async (bodyValue, methodName, type, pathName) => {
            const bytes =
              typeof bodyValue === "string" ? Buffer.from(bodyValue, "utf8") : bodyValue;
            const noBody = methodName === "GET" || methodName === "HEAD";
            const res = await http(
              service.publicUrl,
              methodName,
              pathName,
              noBody ? undefined : bytes,
              type,
            );
            const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for ${methodName} ${pathName} (content-type ${String(type)}) ${show(noBody ? undefined : bytes)}`;
            if (type === "application/grpc") {
              // A gRPC client calling a path that is no RPC of ours: 200 and
              // UNIMPLEMENTED in the trailers, as every gRPC server answers
              // (edge-answers.test.ts reads the trailers).
              assert.equal(res.status, 200, context);
              assert.equal(res.contentType, "application/grpc", context);
              assert.equal(res.text, "", context);
            } else {
              assertRestError(res, context, methodName);
            }
          },
        ),
        runs(0x5eed_0003, 800),
      );
    });
  });

  describe("Connect JSON fuzzing of TokenService/CreateToken (public listener)", () => {
    it("random and mutated bodies: 200 for the valid request, never a 5xx", async () => {
      const connectPath = "/perps.token.v1.TokenService/CreateToken";
      const createFieldNames = ["signature", "timestamp", "userId", "expiresIn", "name"];
      const input = fc.oneof(
        { arbitrary: bodyMutations.map((m) => ({ kind: "mutated" as const, m })), weight: 3 },
        {
          arbitrary: fc
            .oneof(
              fc.jsonValue().map((v) => JSON.stringify(v) ?? "null"),
              hostileValue,
              fc.uint8Array({ maxLength: 300 }),
            )
            .map((b) => ({ kind: "random" as const, b })),
          weight: 2,
        },
      );
      let valid = 0;
      await fc.assert(
        fc.asyncProperty(input, fc.boolean(), async (x, withName) => {
          const fields = await validCreateFields(await fuzzUser(), {
            expiresIn: withName,
            name: withName,
          });
          const body =
            x.kind === "mutated"
              ? mutatedBody(fields, x.m)
              : typeof x.b === "string"
                ? Buffer.from(x.b, "utf8")
                : x.b;
          const res = await http(service.publicUrl, "POST", connectPath, body);
          const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for ${show(body)}`;
          // protobuf-es refuses duplicate keys in Connect JSON (REST keeps the
          // last one), so a body that may repeat a key may go either way.
          const mayRepeatKey =
            x.kind === "mutated" &&
            x.m.members.some((m) => ["add", "duplicate", "duplicateSame"].includes(m.kind));
          if (
            x.kind === "mutated" &&
            !mayRepeatKey &&
            isUnchangedRequest(body, fields, createFieldNames)
          ) {
            valid++;
            assertCreated(res, 200, context);
            return;
          }
          assert.ok(res.status < 500, `5xx: ${context}`);
          if (res.status >= 400) {
            const error = parseOrUndefined(res.text);
            assert.ok(isRecord(error) && typeof error.code === "string", context);
            assert.notEqual(error.code, "internal", context);
            assert.notEqual(error.code, "unknown", context);
          } else {
            // protobuf JSON is laxer than REST (e.g. null means unset), so a
            // changed body may still be a valid request; then it is answered fully.
            assertCreated(res, 200, context);
          }
        }),
        runs(0x5eed_0004, 400),
      );
      assert.ok(valid >= 5, `only ${valid} valid requests`);
    });
  });

  describe("Connect binary fuzzing of TokenService (public listener)", () => {
    // A well-formed (unsigned) CreateTokenRequest to mutate.
    const someCreateBinary = toBinary(
      CreateTokenRequestSchema,
      create(CreateTokenRequestSchema, {
        signature: "ab".repeat(64),
        timestamp: 1n,
        userId: SOME_USER_ID,
      }),
    );

    it("random and mutated protobuf bytes as application/proto: a 4xx, never a 5xx", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("CreateToken", "DeleteToken"),
          fc.oneof(
            fc.uint8Array({ maxLength: 200 }),
            fc
              .array(byteMutation, { minLength: 1, maxLength: 3 })
              .map((ms) =>
                ms.reduce<Uint8Array>((bytes, m) => applyByteMutation(bytes, m), someCreateBinary),
              ),
          ),
          async (method, body) => {
            const res = await http(
              service.publicUrl,
              "POST",
              `/perps.token.v1.TokenService/${method}`,
              body,
              "application/proto",
            );
            const context = `HTTP ${res.status} ${res.text.slice(0, 300)} for ${method} ${Buffer.from(body).toString("hex").slice(0, 400)}`;
            assert.ok(res.status >= 400 && res.status < 500, context);
            const error = parseOrUndefined(res.text);
            assert.ok(isRecord(error) && typeof error.code === "string", context);
          },
        ),
        runs(0x5eed_0007, 200),
      );
    });
  });

  describe("gRPC fuzzing with raw request bytes", () => {
    interface Target {
      label: string;
      listener: "public" | "internal";
      path: string;
      /** Extra codes this target may answer (UNIMPLEMENTED on the public listener). */
      extra: readonly grpc.status[];
    }
    const targets: Target[] = [
      ["public", "TokenService/CreateToken", []],
      ["public", "TokenService/DeleteToken", []],
      ["public", "UserKeyService/PutUserKey", [grpc.status.UNIMPLEMENTED]],
      ["internal", "TokenService/CreateToken", []],
      ["internal", "TokenService/DeleteToken", []],
      ["internal", "UserKeyService/PutUserKey", []],
      ["internal", "UserKeyService/DeleteUserKey", []],
    ].map(([listener, method, extra]) => ({
      label: `${String(listener)} ${String(method)}`,
      listener: listener === "public" ? "public" : "internal",
      path: `/perps.token.v1.${String(method)}`,
      extra: extra as grpc.status[],
    }));

    it("random bytes as the request message: a client-side code, never INTERNAL/UNKNOWN/DATA_LOSS/UNAVAILABLE", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...targets),
          fc.oneof(
            fc.uint8Array({ maxLength: 200 }),
            // Well-formed wire format with random field numbers and types.
            fc
              .array(
                fc.tuple(
                  fc.integer({ min: 1, max: 20 }),
                  fc.nat(5),
                  fc.uint8Array({ maxLength: 20 }),
                ),
                { maxLength: 6 },
              )
              .map((entries) =>
                Buffer.concat(
                  entries.map(([field, wireType, payload]) =>
                    Buffer.concat([
                      Buffer.of((field << 3) | wireType),
                      wireType === 2 ? Buffer.of(payload.length) : Buffer.alloc(0),
                      payload,
                    ]),
                  ),
                ),
              ),
          ),
          async (target, message) => {
            const client = target.listener === "public" ? rawPublic : rawInternal;
            const answer = await rawUnary(client, target.path, message);
            const context = grpcContext(target.label, message, answer);
            assert.ok(!SERVER_SIDE_CODES.has(answer.code), context);
            assert.ok(
              answer.code === grpc.status.OK ||
                CLIENT_SIDE_CODES.has(answer.code) ||
                target.extra.includes(answer.code),
              context,
            );
            // Random bytes are never a validly signed token request.
            if (target.path.includes("TokenService")) {
              assert.notEqual(answer.code, grpc.status.OK, context);
            }
          },
        ),
        runs(0x5eed_0005, 600),
      );
    });

    it("mutated valid protobuf encodings: OK only when they still decode to the valid request", async () => {
      type Kind = "create" | "delete" | "putKey" | "deleteKey";
      async function validRequest(
        kind: Kind,
      ): Promise<{ schema: DescMessage; path: string; bytes: Uint8Array }> {
        switch (kind) {
          case "create": {
            const req = await signedCreate(await fuzzUser(), {
              timestamp: BigInt(timestamp()),
              expiresIn: 60n,
              name: uniqueName(),
            });
            return {
              schema: CreateTokenRequestSchema,
              path: "/perps.token.v1.TokenService/CreateToken",
              bytes: toBinary(CreateTokenRequestSchema, create(CreateTokenRequestSchema, req)),
            };
          }
          case "delete": {
            const user = await fuzzUser();
            const token = await grpcTokens.createToken(
              await signedCreate(user, { timestamp: BigInt(timestamp()) }),
            );
            const req = await signedDelete(user, token.id, { timestamp: BigInt(timestamp()) });
            return {
              schema: DeleteTokenRequestSchema,
              path: "/perps.token.v1.TokenService/DeleteToken",
              bytes: toBinary(DeleteTokenRequestSchema, create(DeleteTokenRequestSchema, req)),
            };
          }
          case "putKey":
          case "deleteKey": {
            const fresh = await newUser();
            const schema = kind === "putKey" ? PutUserKeyRequestSchema : DeleteUserKeyRequestSchema;
            const msg = create(schema, { userId: fresh.userId, publicKey: fresh.publicKey });
            return {
              schema,
              path: `/perps.token.v1.UserKeyService/${kind === "putKey" ? "PutUserKey" : "DeleteUserKey"}`,
              bytes: toBinary(schema, msg),
            };
          }
        }
      }
      let valid = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom<Kind>("create", "delete", "putKey", "deleteKey"),
          fc.boolean(),
          fc.array(byteMutation, { minLength: 1, maxLength: 3 }),
          async (kind, overPublic, mutations) => {
            const { schema, path, bytes } = await validRequest(kind);
            let message = bytes;
            for (const m of mutations) {
              message = applyByteMutation(message, m);
            }
            const isTokenCall = kind === "create" || kind === "delete";
            const client = isTokenCall && overPublic ? rawPublic : rawInternal;
            const answer = await rawUnary(client, path, message);
            const context = grpcContext(`${kind} (${path})`, message, answer);
            assert.ok(!SERVER_SIDE_CODES.has(answer.code), context);
            if (decodesTo(schema, message, bytes)) {
              valid++;
              assert.equal(answer.code, grpc.status.OK, context);
            } else if (isTokenCall) {
              // A token request that changed is no longer validly signed.
              assert.ok(CLIENT_SIDE_CODES.has(answer.code), context);
            } else {
              // A changed key request may still be a well-formed one.
              assert.ok(
                answer.code === grpc.status.OK || CLIENT_SIDE_CODES.has(answer.code),
                context,
              );
            }
          },
        ),
        runs(0x5eed_0006, 500),
      );
      assert.ok(valid >= 1, `only ${valid} unchanged requests`);
    });
  });

  describe("after the fuzzing", () => {
    it("the service is still healthy: /healthz, /readyz, a normal create, no error logs", async () => {
      for (const base of [service.publicUrl, service.internalUrl]) {
        for (const path of ["/healthz", "/readyz"]) {
          const res = await fetch(`${base}${path}`);
          assert.equal(res.status, 200, `${base}${path}: ${res.status}`);
        }
      }
      const user = await registeredUser();
      const fields = await validCreateFields(user, { expiresIn: true, name: true });
      const res = await http(service.publicUrl, "POST", PATH, Buffer.from(JSON.stringify(fields)));
      assertCreated(res, 201, `${res.status} ${res.text}`);
      const grpcAnswer = await grpcTokens.createToken(
        await signedCreate(user, { timestamp: BigInt(timestamp()) }),
      );
      assert.ok(isWellFormedToken(grpcAnswer.token));

      const lines = service.logs.flatMap((chunk) => chunk.split("\n")).filter((l) => l !== "");
      assert.ok(lines.length > 100, `only ${lines.length} log lines`);
      const errors = lines.filter((line) => {
        const entry = parseOrUndefined(line);
        return !isRecord(entry) || typeof entry.level !== "number" || entry.level >= 50;
      });
      assert.deepEqual(errors.slice(0, 5), [], `${errors.length} error log lines`);
    });
  });
});
