import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createContextValues } from "@connectrpc/connect";
import {
  admittedAs,
  callerKey,
  callerOf,
  operatorKey,
  withCaller,
} from "../../../src/admin-auth/call-gate.js";
import type { NodeServerRequest } from "../../../src/http/node-handler.js";

/** A TLS socket as far as callerOf looks at it. */
function tlsSocket(authorized: boolean, subject: Record<string, string> | undefined) {
  return {
    remoteAddress: "10.0.0.7",
    authorized,
    getPeerCertificate: () => ({ subject }),
  };
}

describe("callerOf", () => {
  it("the peer's address, and no certificate on a plain connection", () => {
    assert.deepEqual(callerOf({ remoteAddress: "192.0.2.1" }), {
      address: "192.0.2.1",
      certificateSubject: undefined,
    });
    assert.deepEqual(callerOf(undefined), { address: "", certificateSubject: undefined });
    assert.deepEqual(callerOf({}), { address: "", certificateSubject: undefined });
  });

  it("the CN of a client certificate the listener verified, and only of one it verified", () => {
    assert.deepEqual(callerOf(tlsSocket(true, { CN: "alice" })), {
      address: "10.0.0.7",
      certificateSubject: "alice",
    });
    assert.equal(callerOf(tlsSocket(false, { CN: "alice" })).certificateSubject, undefined);
    assert.equal(callerOf(tlsSocket(true, { CN: "" })).certificateSubject, undefined);
    assert.equal(callerOf(tlsSocket(true, { O: "org" })).certificateSubject, undefined);
    assert.equal(callerOf(tlsSocket(true, undefined)).certificateSubject, undefined);
  });
});

describe("withCaller", () => {
  it("adds the caller of the request's connection to the listener's context values", () => {
    const values = createContextValues();
    const contextValues = withCaller(() => values);
    const req = { socket: tlsSocket(true, { CN: "bob" }) } as unknown as NodeServerRequest;
    assert.equal(contextValues(req), values);
    assert.deepEqual(values.get(callerKey), { address: "10.0.0.7", certificateSubject: "bob" });
    assert.deepEqual(createContextValues().get(callerKey), {
      address: "",
      certificateSubject: undefined,
    });
  });
});

describe("admittedAs", () => {
  it('carries the operator the gate let a call in as into its context, and none for ""', () => {
    assert.equal(admittedAs(createContextValues(), "alice").get(operatorKey), "alice");
    const values = createContextValues();
    assert.equal(admittedAs(values, ""), values);
    assert.equal(values.get(operatorKey), "");
  });
});
