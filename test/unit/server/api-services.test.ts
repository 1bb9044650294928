import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { ConnectError, createConnectRouter, createContextValues } from "@connectrpc/connect";
import { file_perps_token_v1_token_admin } from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import { file_perps_token_v1_token_introspection } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { file_perps_token_v1_token } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { file_perps_token_v1_user_key } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { createCallGate } from "../../../src/admin-auth/call-gate.js";
import { serviceCredentialInterceptor } from "../../../src/admin-auth/service-credential-interceptor.js";
import { apiServices } from "../../../src/server/api-services.js";
import { credentialedServices, servedOn } from "../../../src/server/served-service.js";

const CONTRACT_FILES = [
  file_perps_token_v1_token,
  file_perps_token_v1_user_key,
  file_perps_token_v1_token_admin,
  file_perps_token_v1_token_introspection,
];

const served = apiServices({ token: {}, userKey: {}, tokenAdmin: {}, introspection: {} });
const names = (list: typeof served) => list.map((s) => s.service.typeName);

type Next = Parameters<ReturnType<typeof serviceCredentialInterceptor>>[0];

/**
 * The service names whose calls the service credential interceptor refuses
 * when no credential is good (every method of every served service tried),
 * and those the call gate refuses: each must be what `services` declares.
 */
async function refusedWithoutServiceCredential(services: readonly DescService[]) {
  const interceptor = serviceCredentialInterceptor({ check: () => false, services });
  const next: Next = async () => ({}) as Awaited<ReturnType<Next>>;
  // An operator's secret is good here, so that only the service credential decides.
  const gate = createCallGate({
    operatorOf: () => "operator",
    adminServices: credentialedServices(served).adminServices,
    serviceCheck: () => false,
    serviceCredentialServices: services,
  });
  const byInterceptor = new Set<string>();
  const byGate = new Set<string>();
  for (const { service } of served) {
    for (const method of service.methods) {
      const req = {
        service,
        method,
        header: new Headers({ authorization: "Bearer s" }),
        contextValues: createContextValues(),
      } as unknown as Parameters<Next>[0];
      if ((await interceptor(next)(req).catch((err: unknown) => err)) instanceof ConnectError) {
        byInterceptor.add(service.typeName);
      }
    }
    if (gate(service, { authorization: "Bearer s" }, undefined) !== undefined) {
      byGate.add(service.typeName);
    }
  }
  return { interceptor: [...byInterceptor], gate: [...byGate] };
}

describe("apiServices: the one list of RPC services", () => {
  it("holds every service of the contract's protos, once", () => {
    const contract = CONTRACT_FILES.flatMap((file) => file.services.map((s) => s.typeName));
    assert.deepEqual([...names(served)].sort(), [...contract].sort());
    assert.equal(new Set(names(served)).size, served.length);
  });

  it("serves only TokenService on the public listener, with its REST mapping there", () => {
    assert.deepEqual(names(servedOn(served, "public")), ["perps.token.v1.TokenService"]);
    assert.deepEqual(
      served.filter((s) => s.rest.length > 0).map((s) => [s.service.typeName, s.rest]),
      [["perps.token.v1.TokenService", ["public"]]],
    );
    assert.equal(servedOn(served, "internal").length, served.length);
  });

  it("asks an operator's credential for UserKeyService and TokenAdminService only", () => {
    assert.deepEqual(names(served.filter((s) => s.operatorOnly)), [
      "perps.token.v1.UserKeyService",
      "perps.token.v1.TokenAdminService",
    ]);
  });

  it("asks a calling service's credential for TokenIntrospectionService only, and the interceptor and call gate refuse exactly that", async () => {
    const declared = credentialedServices(served).serviceCredentialServices;
    assert.deepEqual(
      declared.map((s) => s.typeName),
      ["perps.token.v1.TokenIntrospectionService"],
    );
    assert.deepEqual(await refusedWithoutServiceCredential(declared), {
      interceptor: ["perps.token.v1.TokenIntrospectionService"],
      gate: ["perps.token.v1.TokenIntrospectionService"],
    });
  });

  it("the service credential checks follow the declaration, not a list of their own", async () => {
    for (const { service } of served) {
      assert.deepEqual(await refusedWithoutServiceCredential([service]), {
        interceptor: [service.typeName],
        gate: [service.typeName],
      });
    }
  });

  it("routes every method of every entry", () => {
    const router = createConnectRouter();
    for (const service of served) {
      service.route(router);
    }
    const expected = served.flatMap((s) =>
      s.service.methods.map((m) => `/${s.service.typeName}/${m.name}`),
    );
    assert.deepEqual(router.handlers.map((h) => h.requestPath).sort(), expected.sort());
  });
});
