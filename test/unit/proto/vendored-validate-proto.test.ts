import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { type DescField, getOption, toJson } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import * as runtime from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import * as ours from "@perps/token-client/contract/buf/validate/validate_pb.js";

// proto/buf/validate/validate.proto is written from the runtime's descriptor
// (scripts/protovalidate-proto.ts): the rules compiled into our protos must
// mean to the runtime what they meant to buf.

describe("the vendored buf/validate/validate.proto", () => {
  it("compiles to the descriptor @bufbuild/protovalidate ships", () => {
    assert.deepEqual(
      toJson(FileDescriptorProtoSchema, ours.file_buf_validate_validate.proto),
      toJson(FileDescriptorProtoSchema, runtime.file_buf_validate_validate.proto),
    );
  });

  it("with the same predefined rule (CEL) on every field", () => {
    const theirs = runtime.file_buf_validate_validate.messages;
    for (const message of ours.file_buf_validate_validate.messages) {
      const other = theirs.find((m) => m.typeName === message.typeName);
      assert.ok(other !== undefined, message.typeName);
      for (const field of message.fields) {
        const match: DescField | undefined = other.fields.find((f) => f.number === field.number);
        assert.ok(match !== undefined, `${field}`);
        assert.deepEqual(
          getOption(field, ours.predefined).cel.map((r) => [r.id, r.message, r.expression]),
          getOption(match, runtime.predefined).cel.map((r) => [r.id, r.message, r.expression]),
          `${field}`,
        );
      }
    }
  });

  it("is what the script writes from the installed runtime", () => {
    execFileSync(process.execPath, [
      "--import",
      "tsx",
      "scripts/protovalidate-proto.ts",
      "--check",
    ]);
  });
});
