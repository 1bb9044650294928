import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { ConnectError, createConnectRouter } from "@connectrpc/connect";
import { file_perps_token_v1_token_admin } from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import { file_perps_token_v1_token_introspection } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { file_perps_token_v1_token } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { file_perps_token_v1_user_key } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { createCallGate } from "../../../src/admin-auth/call-gate.js";
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

/**
 * The service names whose calls the call gate refuses when no service
 * credential is good (an operator's secret is good here, so that only the
 * service credential decides): it must be what `services` declares.
 */
function refusedWithoutServiceCredential(services: readonly DescService[]): string[] {
  const gate = createCallGate({
    operatorOf: () => "operator",
    adminServices: credentialedServices(served).adminServices,
    serviceCheck: () => false,
    serviceCredentialServices: services,
  });
  return served
    .filter(
      ({ service }) =>
        gate(service, { authorization: "Bearer s" }, undefined) instanceof ConnectError,
    )
    .map(({ service }) => service.typeName);
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

  it("asks a calling service's credential for TokenIntrospectionService only, and the call gate refuses exactly that", () => {
    const declared = credentialedServices(served).serviceCredentialServices;
    assert.deepEqual(
      declared.map((s) => s.typeName),
      ["perps.token.v1.TokenIntrospectionService"],
    );
    assert.deepEqual(refusedWithoutServiceCredential(declared), [
      "perps.token.v1.TokenIntrospectionService",
    ]);
  });

  it("the service credential check follows the declaration, not a list of its own", () => {
    for (const { service } of served) {
      assert.deepEqual(refusedWithoutServiceCredential([service]), [service.typeName]);
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
