import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { CreateTokenRequestSchema } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { rawExchange } from "../support/raw-exchange.js";
import { CREATE, envelope, refusalTelemetrySuite } from "../support/refusal-telemetry-suite.js";
import { restJson } from "../support/rest-json.js";
import { signedCreate } from "../support/signing.js";

// Every answer the service gives, whoever gives it (a plain endpoint, the REST
// gateway before the call, Connect before the interceptors, or a call), carries
// the request id, writes exactly one log line with it and is counted exactly
// once in perps_token_requests_total.

describe("every answer is observable", () => {
  const { service, user, expectObserved, rest, h2, malformed, invalid } = refusalTelemetrySuite();

  describe("REST gateway refusals", () => {
    const path = "/user/tokens";
    it("a body that is not a JSON object", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body: "[1, 2]" }),
        { status: 400 },
      ));
    it("a field of the wrong JSON type", async () => {
      const body = restJson({ ...(await signedCreate(user)), timestamp: "soon", userId: 7 });
      await expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body }),
        { status: 400 },
      );
    });
    it("a missing required field", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body: "{}" }),
        { status: 400 },
      ));
    it("405", () =>
      expectObserved(
        { method: "http", protocol: "rest", code: "unimplemented" },
        rest(path, { method: "PUT", contentType: "application/json", body: "{}" }),
        { status: 405 },
      ));
    it("413", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body: `"${"x".repeat(70_000)}"` }),
        { status: 413 },
      ));
    it("415", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "text/plain", body: "{}" }),
        { status: 415 },
      ));
    it("404, with a new UUID when the caller sends no id", () =>
      expectObserved(
        { method: "http", protocol: "rest", code: "not_found" },
        rest("/no/such/thing", { method: "GET" }),
        { status: 404, given: null },
      ));
    it("a refusal with an unacceptable x-request-id gets a new UUID", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body: "{}" }),
        { status: 400, given: "not acceptable: spaces" },
      ));
  });

  describe("Connect's own refusals", () => {
    const path = `/${CREATE}`;
    it("an unsupported content type", () =>
      expectObserved(
        invalid(CREATE, "connect"),
        rest(path, { contentType: "text/plain", body: "{}" }),
        { status: 415 },
      ));
    it("a malformed binary message", () =>
      expectObserved(
        invalid(CREATE, "connect"),
        rest(path, { contentType: "application/proto", body: Uint8Array.of(0xff, 0xff, 0xff) }),
        { status: 400 },
      ));
    it("a wrong HTTP method", () =>
      expectObserved(
        { method: CREATE, protocol: "connect", code: "unimplemented" },
        rest(path, { method: "GET" }),
        { status: 405 },
      ));
    it("an HTTP/1.0 request without a Host header (once an uncaught exception)", async () => {
      await expectObserved(
        invalid(CREATE, "connect"),
        async (requestId) => {
          const text = await rawExchange(
            service.publicUrl,
            `POST ${path} HTTP/1.0\r\ncontent-type: application/json\r\n` +
              `x-request-id: ${requestId ?? ""}\r\ncontent-length: 2\r\n\r\n{}`,
            { end: true },
          );
          const status = /^HTTP\/1\.\d (\d{3})/.exec(text)?.[1];
          return {
            status: Number(status),
            requestId: /^x-request-id: (.*)\r$/im.exec(text)?.[1],
          };
        },
        { status: 400 },
      );
      assert.equal((await fetch(`${service.publicUrl}/healthz`)).status, 200);
    });
    it("an unknown method of a known service", () =>
      expectObserved(
        { method: "http", protocol: "rest", code: "not_found" },
        rest("/perps.token.v1.TokenService/NoSuchMethod", {
          contentType: "application/json",
          body: "{}",
        }),
        { status: 404 },
      ));
  });

  describe("gRPC and gRPC-Web refusals", () => {
    it("gRPC: a malformed message is INVALID_ARGUMENT, id in the headers", () =>
      expectObserved(
        invalid(CREATE, "grpc"),
        h2(
          () => service.publicUrl,
          `/${CREATE}`,
          "application/grpc",
          malformed,
          (answer) => assert.equal(answer.trailers["grpc-status"], "3"),
        ),
        { status: 200 },
      ));
    it("gRPC on the internal listener, with a new UUID", () =>
      expectObserved(
        invalid(CREATE, "grpc"),
        h2(() => service.internalUrl, `/${CREATE}`, "application/grpc+proto", malformed),
        { status: 200, given: null },
      ));
    it("gRPC-Web: a malformed message", () =>
      expectObserved(
        invalid(CREATE, "grpc-web"),
        h2(() => service.publicUrl, `/${CREATE}`, "application/grpc-web+proto", malformed),
        { status: 200 },
      ));
    /** A gRPC call of a method `url`'s listener does not have. */
    const unknownMethod = (url: () => string, path: string) =>
      expectObserved(
        { method: "http", protocol: "grpc", code: "unimplemented" },
        h2(url, path, "application/grpc", envelope(new Uint8Array()), (answer) => {
          assert.equal(answer.trailers["grpc-status"], "12");
          assert.equal(answer.trailers["x-request-id"], answer.headers["x-request-id"]);
        }),
        { status: 200 },
      );
    it("gRPC: an unknown method on the public listener is UNIMPLEMENTED, id in the trailers", () =>
      unknownMethod(() => service.publicUrl, "/perps.token.v1.TokenService/NoSuchMethod"));
    it("gRPC: an unknown method on the internal listener is UNIMPLEMENTED, id in the trailers", () =>
      unknownMethod(() => service.internalUrl, "/perps.token.v1.UserKeyService/NoSuchMethod"));
  });

  describe("calls still log and count once", () => {
    it("a REST create", async () => {
      const body = restJson(await signedCreate(user));
      await expectObserved(
        { method: CREATE, protocol: "rest", code: "ok" },
        rest("/user/tokens", { contentType: "application/json", body }),
        { status: 201 },
      );
    });
    it("a gRPC create", async () => {
      const message = toBinary(
        CreateTokenRequestSchema,
        create(CreateTokenRequestSchema, await signedCreate(user)),
      );
      await expectObserved(
        { method: CREATE, protocol: "grpc", code: "ok" },
        h2(
          () => service.publicUrl,
          `/${CREATE}`,
          "application/grpc",
          envelope(message),
          (answer) => assert.equal(answer.trailers["grpc-status"], "0"),
        ),
        { status: 200 },
      );
    });
    it("a REST call refused by the service (not by the gateway)", async () => {
      const body = restJson(await signedCreate(user, { expiresIn: 0n }));
      await expectObserved(
        invalid(CREATE, "rest"),
        rest("/user/tokens", { contentType: "application/json", body }),
        { status: 400 },
      );
    });
  });
});
