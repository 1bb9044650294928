import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type ClientErrorSource,
  clientErrorReport,
  refusalReport,
  type TransportReportTargets,
} from "../../../../src/server/listener/transport-reports.js";
import { CONNECT_REFUSED, type TransportAnswer } from "../../../../src/server/transport-answer.js";

describe("client error report", () => {
  it("reports each error once, with the source it was first seen at", () => {
    const seen: [string, ClientErrorSource][] = [];
    const report = clientErrorReport({
      onClientError: (err, source) => seen.push([err.message, source]),
    });
    const reset = new Error("reset");
    report(reset, "socket");
    report(reset, "http1");
    report(new Error("broken"), "http2-stream");
    assert.deepEqual(seen, [
      ["reset", "socket"],
      ["broken", "http2-stream"],
    ]);
  });

  it("reports to the callback the targets hold when the error comes; none is no failure", () => {
    const targets: TransportReportTargets = {};
    const report = clientErrorReport(targets);
    report(new Error("before"), "socket");
    const seen: string[] = [];
    targets.onClientError = (err) => seen.push(err.message);
    report(new Error("after"), "over-cap");
    assert.deepEqual(seen, ["after"]);
  });
});

describe("refusal report", () => {
  it("tells the refusal's status and code with the request id, reason and protocol", () => {
    const told: TransportAnswer[] = [];
    const tell = refusalReport({ onTransportAnswer: (answer) => told.push(answer) });
    tell(CONNECT_REFUSED, "id-1", "CONNECT", "http2");
    assert.deepEqual(told, [
      {
        status: 501,
        code: CONNECT_REFUSED.code,
        requestId: "id-1",
        reason: "CONNECT",
        protocol: "http2",
      },
    ]);
  });

  it("without a callback tells nobody", () => {
    assert.doesNotThrow(() => refusalReport({})(CONNECT_REFUSED, "id-2", "CONNECT", "http1"));
  });
});
