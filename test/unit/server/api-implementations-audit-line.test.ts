import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { callerKey, operatorKey } from "../../../src/admin-auth/call-gate.js";
import { createAuditLog } from "../../../src/server/api-implementations.js";
import { requestIdKey } from "../../../src/server/request-id.js";
import { keptLogLines } from "../../support/kept-log-lines.js";

/** The handler context of an operator's call, as the interceptors leave it. */
function operatorCall() {
  const values = createContextValues();
  values.set(operatorKey, "alice");
  values.set(callerKey, { address: "10.1.2.3", certificateSubject: undefined });
  values.set(requestIdKey, "req-42");
  return createHandlerContext({
    service: UserKeyService,
    method: UserKeyService.method.putUserKey,
    protocolName: "grpc",
    requestMethod: "POST",
    url: "http://localhost/x",
    contextValues: values,
  });
}

describe("audit lines", () => {
  it("say what was done, by which operator, from where, in which call", () => {
    const { logger, lines } = keptLogLines("info");
    const audit = createAuditLog(logger);
    audit(
      { audit: "PutUserKey", userId: "u-1", fingerprint: "SHA256:abc", stored: true },
      operatorCall(),
    );
    assert.equal(lines.length, 1);
    const [line] = lines;
    assert.equal(line?.msg, "audit");
    assert.equal(line?.level, 30, "info");
    assert.equal(line?.audit, "PutUserKey");
    assert.equal(line?.userId, "u-1");
    assert.equal(line?.fingerprint, "SHA256:abc");
    assert.equal(line?.stored, true);
    assert.equal(line?.operator, "alice");
    assert.equal(line?.peer, "10.1.2.3");
    assert.equal(line?.requestId, "req-42");
  });

  it("are written whatever LOG_LEVEL drops", () => {
    for (const level of ["warn", "error", "silent"]) {
      const { logger, lines } = keptLogLines(level);
      logger.info("dropped");
      createAuditLog(logger)(
        { audit: "RevokeUserTokens", userId: "u-2", revokedTokens: 3 },
        operatorCall(),
      );
      assert.deepEqual(
        lines.map((l) => [l.msg, l.revokedTokens]),
        [["audit", 3]],
        level,
      );
    }
  });
});
