import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { isGrpcError } from "../support/grpc-client.js";
import {
  ALREADY_EXISTS,
  createFields,
  DEFAULT_EXPIRES_IN,
  deleteFields,
  INVALID_TOKEN_CHALLENGE,
  jsonText,
  MAX_BODY_BYTES,
  NOT_FOUND,
  openApi,
  PATH,
  parseJson,
  withChanges,
} from "../support/rest-contract-bodies.js";
import {
  assertCreated,
  assertDeleted,
  assertError,
  h2Request,
} from "../support/rest-contract-checks.js";
import { restContractSuite } from "../support/rest-contract-suite.js";
import { signedCreate, signedDelete } from "../support/signing.js";

// The REST contract of POST/DELETE /user/tokens, continued (rest-contract.test.ts).

describe("REST contract of /user/tokens", () => {
  const { service, grpcTokens, registeredUser, rest, post, del, created } = restContractSuite();

  describe("HTTP hygiene", () => {
    for (const contentType of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/jsonx",
      null,
    ]) {
      it(`content-type ${contentType ?? "(none)"} → 415 for POST and DELETE`, async () => {
        const user = await registeredUser();
        const text = jsonText(await createFields(user));
        for (const method of ["POST", "DELETE"]) {
          const body = contentType === null ? Buffer.from(text) : text;
          assertError(await rest(method, body, { contentType }), 415, undefined);
        }
      });
    }

    it("a body over 64 KiB → 413 (with content-length) for POST and DELETE", async () => {
      const user = await registeredUser();
      const fields = withChanges(await createFields(user), { padding: "p".repeat(MAX_BODY_BYTES) });
      for (const method of ["POST", "DELETE"]) {
        assertError(await rest(method, jsonText(fields)), 413, undefined);
      }
      // The connection still serves the next request.
      await created(user);
    });

    it("a body over 64 KiB → 413 (chunked, without content-length)", async () => {
      const user = await registeredUser();
      const text = jsonText(
        withChanges(await createFields(user), { padding: "p".repeat(MAX_BODY_BYTES) }),
      );
      const bytes = Buffer.from(text);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 16_384) {
            controller.enqueue(bytes.subarray(i, i + 16_384));
          }
          controller.close();
        },
      });
      const res = await fetch(`${service.publicUrl}${PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        duplex: "half",
      });
      const received = { status: res.status, headers: res.headers, text: await res.text() };
      openApi.check({ method: "POST", path: PATH, ...received });
      assertError(received, 413, undefined);
    });

    for (const method of ["PUT", "PATCH"]) {
      it(`${method} ${PATH} → 405 with Allow: DELETE, GET, POST`, async () => {
        const user = await registeredUser();
        const res = await rest(method, jsonText(await createFields(user)));
        assertError(res, 405, undefined);
        assert.equal(res.headers.get("allow"), "DELETE, GET, POST");
      });
    }

    for (const [method, path] of [
      ["GET", "/"],
      ["POST", "/user/token"],
      ["POST", "/user/tokens/abc"],
      ["POST", "/users/tokens"],
      ["DELETE", "/tokens"],
      ["GET", "/user"],
    ] as const) {
      it(`${method} ${path} (unknown path) → 404 with the JSON error shape`, async () => {
        const user = await registeredUser();
        const body = method === "GET" ? undefined : jsonText(await createFields(user));
        assertError(await rest(method, body, { path }), 404, NOT_FOUND);
      });
    }
  });

  describe("other protocols", () => {
    it("a token created over REST is deleted over gRPC (internal listener)", async () => {
      const user = await registeredUser();
      const token = await created(user, { name: "rest→grpc" });
      const res = await grpcTokens.deleteToken(await signedDelete(user, token.id));
      assert.equal(res.$typeName, "perps.token.v1.DeleteTokenResponse");
      // Gone for REST as well.
      assertError(await del(await deleteFields(user, token.id)), 404, NOT_FOUND);
    });

    it("a token created over gRPC is deleted over REST", async () => {
      const user = await registeredUser();
      const token = await grpcTokens.createToken(
        await signedCreate(user, { name: "grpc→rest", expiresIn: 3600n }),
      );
      // The name is taken for REST too.
      assertError(await post(await createFields(user, { name: "grpc→rest" })), 409, ALREADY_EXISTS);
      assertDeleted(await del(await deleteFields(user, token.id)));
      await assert.rejects(grpcTokens.deleteToken(await signedDelete(user, token.id)), (err) =>
        isGrpcError(err, GrpcStatus.NOT_FOUND),
      );
    });

    it("REST over h2c (HTTP/2 prior knowledge): create 201, list 200, delete 200, then list 401", async () => {
      const user = await registeredUser();
      const sentAt = Date.now();
      const createRes = await h2Request(
        service.publicUrl,
        "POST",
        jsonText(await createFields(user, { name: "h2c" })),
      );
      const token = assertCreated(
        {
          status: createRes.status,
          headers: new Headers({ "content-type": String(createRes.headers["content-type"]) }),
          text: createRes.text,
        },
        DEFAULT_EXPIRES_IN,
        sentAt,
        Date.now(),
      );
      const auth = { authorization: `Bearer ${token.token}` };
      const listRes = await h2Request(service.publicUrl, "GET", undefined, undefined, auth);
      assert.equal(listRes.status, 200, listRes.text);
      const listed = parseJson(listRes.text) as { tokens: Record<string, unknown>[] };
      // The instants the service stamps (issue 42) vary; the rest is exact.
      const [entry] = listed.tokens.map(({ createdAt, expiresAtTime, ...rest }) => {
        assert.equal(typeof createdAt, "string");
        assert.equal(String(expiresAtTime).slice(0, 10), token.expiresAt);
        return rest;
      });
      assert.deepEqual(
        { tokens: entry === undefined ? [] : [entry] },
        {
          tokens: [
            { id: token.id, name: "h2c", expiresAt: token.expiresAt, scopes: ["read", "trade"] },
          ],
        },
      );
      const deleteRes = await h2Request(
        service.publicUrl,
        "DELETE",
        jsonText(await deleteFields(user, token.id)),
      );
      assert.equal(deleteRes.status, 200, deleteRes.text);
      assert.deepEqual(parseJson(deleteRes.text), {});
      const getRes = await h2Request(service.publicUrl, "GET", undefined, undefined, auth);
      assert.equal(getRes.status, 401, getRes.text);
      assert.equal(getRes.headers["www-authenticate"], INVALID_TOKEN_CHALLENGE);
    });
  });
});
