import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ErrorInfoSchema,
  RetryInfoSchema,
} from "@perps/token-client/contract/google/rpc/error_details_pb.js";
import { errorDetailsJson } from "../../../src/status/error-details.js";

describe("errorDetailsJson", () => {
  it("writes each known detail as a protojson Any, in order", () => {
    const err = new ConnectError("m", Code.AlreadyExists, undefined, [
      { desc: ErrorInfoSchema, value: { reason: "R", domain: "d", metadata: { tokenId: "x" } } },
      { desc: RetryInfoSchema, value: { retryDelay: { seconds: 3n } } },
    ]);
    assert.deepEqual(errorDetailsJson(err), [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "R",
        domain: "d",
        metadata: { tokenId: "x" },
      },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3s" },
    ]);
  });

  it("decodes details that came from the wire (type name and bytes)", () => {
    const err = new ConnectError("m", Code.AlreadyExists);
    err.details.push({
      type: ErrorInfoSchema.typeName,
      value: toBinary(ErrorInfoSchema, create(ErrorInfoSchema, { reason: "R" })),
    });
    assert.deepEqual(errorDetailsJson(err), [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "R" },
    ]);
  });

  it("leaves out details of types it does not know, and none gives []", () => {
    const err = new ConnectError("m", Code.Internal, undefined, [
      { desc: DurationSchema, value: { seconds: 1n } },
    ]);
    assert.deepEqual(errorDetailsJson(err), []);
    assert.deepEqual(errorDetailsJson(new ConnectError("m")), []);
  });
});
