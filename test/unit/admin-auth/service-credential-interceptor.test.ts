import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { serviceCredentialCheck } from "../../../src/admin-auth/service-credential.js";
import {
  serviceCredentialInterceptor,
  serviceCredentialRefusal,
} from "../../../src/admin-auth/service-credential-interceptor.js";

type Next = Parameters<ReturnType<typeof serviceCredentialInterceptor>>[0];
type Request = Parameters<Next>[0];

function request(
  service: typeof TokenService | typeof TokenIntrospectionService,
  credential?: string,
) {
  const header = new Headers(
    credential === undefined ? {} : { "x-service-credential": credential },
  );
  return { service, header, contextValues: createContextValues() } as unknown as Request;
}

describe("serviceCredentialInterceptor", () => {
  let calls = 0;
  const next: Next = async () => {
    calls += 1;
    return {} as Awaited<ReturnType<Next>>;
  };
  const interceptor = serviceCredentialInterceptor({
    check: serviceCredentialCheck((secret) => (secret === "svc-secret" ? "edge" : undefined)),
    services: [TokenIntrospectionService],
  });

  it("lets a listed service's call through with a known service's secret", async () => {
    const before = calls;
    await interceptor(next)(request(TokenIntrospectionService, "svc-secret"));
    assert.equal(calls, before + 1);
  });

  it("refuses one without it, or with an unknown secret: UNAUTHENTICATED, saying what to send", async () => {
    const before = calls;
    for (const credential of [undefined, "wrong", ""]) {
      await assert.rejects(
        interceptor(next)(request(TokenIntrospectionService, credential)),
        (err: unknown) =>
          err instanceof ConnectError &&
          err.code === Code.Unauthenticated &&
          err.rawMessage === serviceCredentialRefusal().rawMessage &&
          err.rawMessage.includes('"X-Service-Credential: <service secret>"'),
      );
    }
    assert.equal(calls, before);
  });

  it("leaves other services' calls alone, and every call when the check is off", async () => {
    const before = calls;
    await interceptor(next)(request(TokenService));
    const off = serviceCredentialInterceptor({
      check: serviceCredentialCheck(undefined),
      services: [TokenIntrospectionService],
    });
    await off(next)(request(TokenIntrospectionService));
    assert.equal(calls, before + 2);
  });
});
