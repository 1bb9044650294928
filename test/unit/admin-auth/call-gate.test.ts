import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { TokenAdminService } from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { createCallGate } from "../../../src/admin-auth/call-gate.js";
import { serviceCredentialCheck } from "../../../src/admin-auth/service-credential.js";

const operatorOf = (secret: string) => (secret === "op-secret" ? "alice" : undefined);
const serviceOf = (secret: string) => (secret === "svc-secret" ? "edge" : undefined);
const verified = {
  remoteAddress: "10.0.0.7",
  authorized: true,
  getPeerCertificate: () => ({ subject: { CN: "carol" } }),
};

describe("createCallGate", () => {
  const gate = createCallGate({
    operatorOf,
    adminServices: [TokenAdminService],
    serviceCheck: serviceCredentialCheck(serviceOf),
    serviceCredentialServices: [TokenIntrospectionService, TokenAdminService],
  });

  it("lets in a call to a service that needs no credential", () => {
    assert.equal(gate(TokenService, {}, undefined), undefined);
  });

  it("an admin call: an operator's secret or a verified certificate, no Origin", () => {
    const service = { "x-service-credential": "svc-secret" };
    assert.equal(
      gate(TokenAdminService, { authorization: "Bearer op-secret", ...service }, undefined),
      undefined,
    );
    assert.equal(gate(TokenAdminService, service, verified), undefined);
    assert.equal(
      gate(TokenAdminService, { authorization: "Bearer wrong", ...service }, undefined)?.code,
      Code.Unauthenticated,
    );
    assert.equal(
      gate(TokenAdminService, service, { remoteAddress: "10.0.0.7" })?.code,
      Code.Unauthenticated,
    );
    assert.equal(
      gate(
        TokenAdminService,
        { authorization: "Bearer op-secret", origin: "http://x", ...service },
        undefined,
      )?.code,
      Code.PermissionDenied,
    );
  });

  it("a call of a service that needs the service credential: one known service's secret", () => {
    assert.equal(
      gate(TokenIntrospectionService, { "x-service-credential": "svc-secret" }, undefined),
      undefined,
    );
    for (const value of [undefined, "wrong", ["svc-secret", "svc-secret"]]) {
      const refusal = gate(TokenIntrospectionService, { "x-service-credential": value }, undefined);
      assert.equal(refusal?.code, Code.Unauthenticated, JSON.stringify(value));
      assert.match(refusal?.rawMessage ?? "", /X-Service-Credential/);
    }
    // A service needing both: the operator's secret is not enough.
    assert.equal(
      gate(TokenAdminService, { authorization: "Bearer op-secret" }, undefined)?.code,
      Code.Unauthenticated,
    );
  });

  it("without a service credential check, the services that would need it let every caller in", () => {
    const open = createCallGate({
      operatorOf,
      adminServices: [TokenAdminService],
      serviceCredentialServices: [TokenIntrospectionService],
    });
    assert.equal(open(TokenIntrospectionService, {}, undefined), undefined);
    assert.equal(open(TokenAdminService, {}, undefined)?.code, Code.Unauthenticated);
  });
});
