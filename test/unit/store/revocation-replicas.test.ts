import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { revocationReplicas, revocationsMayWait } from "../../../src/store/revocation-replicas.js";

describe("revocationReplicas", () => {
  it("auto (the default): one replica where some were seen, or before anyone knows; none where none were", () => {
    assert.equal(
      revocationReplicas({ revokeReplicasAck: "auto", minReplicasAck: 0, hasReplicas: true }),
      1,
    );
    assert.equal(
      revocationReplicas({ revokeReplicasAck: "auto", minReplicasAck: 0, hasReplicas: undefined }),
      1,
    );
    assert.equal(
      revocationReplicas({ revokeReplicasAck: "auto", minReplicasAck: 0, hasReplicas: false }),
      0,
    );
  });

  it("a number is taken as it is, whatever the topology has", () => {
    assert.equal(
      revocationReplicas({ revokeReplicasAck: 0, minReplicasAck: 0, hasReplicas: true }),
      0,
    );
    assert.equal(
      revocationReplicas({ revokeReplicasAck: 2, minReplicasAck: 0, hasReplicas: false }),
      2,
    );
  });

  it("never waits for fewer than REDIS_MIN_REPLICAS_ACK", () => {
    assert.equal(
      revocationReplicas({ revokeReplicasAck: "auto", minReplicasAck: 2, hasReplicas: true }),
      2,
    );
    assert.equal(
      revocationReplicas({ revokeReplicasAck: "auto", minReplicasAck: 1, hasReplicas: false }),
      1,
    );
    assert.equal(
      revocationReplicas({ revokeReplicasAck: 0, minReplicasAck: 1, hasReplicas: true }),
      1,
    );
    assert.equal(
      revocationReplicas({ revokeReplicasAck: 3, minReplicasAck: 1, hasReplicas: true }),
      3,
    );
  });
});

describe("revocationsMayWait", () => {
  it("auto: in the topologies built to fail over to a replica (Sentinel, Cluster)", () => {
    assert.equal(
      revocationsMayWait("sentinel", { revokeReplicasAck: "auto", minReplicasAck: 0 }),
      true,
    );
    assert.equal(
      revocationsMayWait("cluster", { revokeReplicasAck: "auto", minReplicasAck: 0 }),
      true,
    );
    assert.equal(
      revocationsMayWait("url", { revokeReplicasAck: "auto", minReplicasAck: 0 }),
      false,
    );
    assert.equal(
      revocationsMayWait("socket", { revokeReplicasAck: "auto", minReplicasAck: 0 }),
      false,
    );
  });

  it("follows a number, and REDIS_MIN_REPLICAS_ACK", () => {
    assert.equal(revocationsMayWait("url", { revokeReplicasAck: 1, minReplicasAck: 0 }), true);
    assert.equal(
      revocationsMayWait("sentinel", { revokeReplicasAck: 0, minReplicasAck: 0 }),
      false,
    );
    assert.equal(revocationsMayWait("url", { revokeReplicasAck: "auto", minReplicasAck: 1 }), true);
  });
});
