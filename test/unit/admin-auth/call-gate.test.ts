import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { TokenAdminService } from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  type Admission,
  createCallGate,
  serviceCredentialRefusal,
} from "../../../src/admin-auth/call-gate.js";
import { serviceCredentialCheck } from "../../../src/admin-auth/service-credential.js";

const operatorOf = (secret: string) => (secret === "op-secret" ? "alice" : undefined);
const serviceOf = (secret: string) => (secret === "svc-secret" ? "edge" : undefined);
const verified = {
  remoteAddress: "10.0.0.7",
  authorized: true,
  getPeerCertificate: () => ({ subject: { CN: "carol" } }),
};

/** The refusal the gate answered; fails when it let the call in. */
function refusal(admission: Admission): ConnectError {
  assert.ok(admission instanceof ConnectError, `let in as "${String(admission)}"`);
  return admission;
}

describe("createCallGate", () => {
  const gate = createCallGate({
    operatorOf,
    adminServices: [TokenAdminService],
    serviceCheck: serviceCredentialCheck(serviceOf),
    serviceCredentialServices: [TokenIntrospectionService, TokenAdminService],
  });
  const service = { "x-service-credential": "svc-secret" };

  it("lets in a call to a service that needs no credential, as no operator", () => {
    assert.equal(gate(TokenService, {}, undefined), "");
    assert.equal(gate(TokenService, { origin: "http://x" }, undefined), "");
  });

  it("lets an admin call in as the operator of its secret or of its verified certificate", () => {
    assert.equal(
      gate(TokenAdminService, { authorization: "Bearer op-secret", ...service }, undefined),
      "alice",
    );
    assert.equal(
      gate(TokenAdminService, { authorization: "bearer op-secret", ...service }, undefined),
      "alice",
      "the scheme's case does not matter",
    );
    assert.equal(gate(TokenAdminService, service, verified), "carol");
  });

  it("refuses an admin call without a known operator's secret: UNAUTHENTICATED, saying what to send", () => {
    for (const authorization of [undefined, "Bearer wrong", "Bearer", "Basic b3Atc2VjcmV0"]) {
      const err = refusal(
        gate(
          TokenAdminService,
          { ...(authorization === undefined ? {} : { authorization }), ...service },
          undefined,
        ),
      );
      assert.equal(err.code, Code.Unauthenticated, String(authorization));
      assert.ok(err.rawMessage.includes('send "authorization: Bearer <operator secret>"'));
      assert.ok(!err.rawMessage.includes("wrong"), "the secret sent is not repeated");
    }
    const unverified = { ...verified, authorized: false };
    assert.equal(refusal(gate(TokenAdminService, service, unverified)).code, Code.Unauthenticated);
  });

  it("refuses an admin call carrying Origin, even with the operator's secret: PERMISSION_DENIED", () => {
    const err = refusal(
      gate(
        TokenAdminService,
        { authorization: "Bearer op-secret", origin: "http://x", ...service },
        undefined,
      ),
    );
    assert.equal(err.code, Code.PermissionDenied);
    assert.equal(
      refusal(gate(TokenAdminService, { origin: "null" }, verified)).code,
      Code.PermissionDenied,
    );
  });

  it("a call of a service that needs the service credential: one known service's secret", () => {
    assert.equal(gate(TokenIntrospectionService, service, undefined), "");
    for (const value of [undefined, "", "wrong", ["svc-secret", "svc-secret"]]) {
      const err = refusal(
        gate(TokenIntrospectionService, { "x-service-credential": value }, undefined),
      );
      assert.equal(err.code, Code.Unauthenticated, JSON.stringify(value));
      assert.equal(err.rawMessage, serviceCredentialRefusal().rawMessage);
      assert.ok(err.rawMessage.includes('"X-Service-Credential: <service secret>"'));
    }
    // A service needing both: the operator's secret is not enough.
    assert.equal(
      refusal(gate(TokenAdminService, { authorization: "Bearer op-secret" }, undefined)).code,
      Code.Unauthenticated,
    );
  });

  it("without a service credential check, the services that would need it let every caller in", () => {
    const open = createCallGate({
      operatorOf,
      adminServices: [TokenAdminService],
      serviceCredentialServices: [TokenIntrospectionService],
    });
    assert.equal(open(TokenIntrospectionService, {}, undefined), "");
    assert.equal(refusal(open(TokenAdminService, {}, undefined)).code, Code.Unauthenticated);
  });
});
