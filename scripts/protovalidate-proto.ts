/*
 * Writes proto/buf/validate/validate.proto from the descriptor that the
 * installed @bufbuild/protovalidate runtime ships, so the buf.validate rules
 * compiled into our descriptors are read by exactly the schema the runtime
 * was built for. The BSR is not reachable from every build machine and the
 * npm package ships no .proto; comments are lost, the descriptor is not
 * (test/unit/proto/vendored-validate-proto.test.ts compares the two).
 *
 * Usage: tsx scripts/protovalidate-proto.ts [--check]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { getOption, isFieldSet } from "@bufbuild/protobuf";
import {
  type DescriptorProto,
  type EnumDescriptorProto,
  type FieldDescriptorProto,
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldDescriptorProtoSchema,
  type FileDescriptorProto,
} from "@bufbuild/protobuf/wkt";
import {
  file_buf_validate_validate,
  predefined,
} from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";

const out = "proto/buf/validate/validate.proto";
const pkg = JSON.parse(
  readFileSync("node_modules/@bufbuild/protovalidate/package.json", "utf8"),
) as { version: string };

const scalarNames: Partial<Record<FieldDescriptorProto_Type, string>> = {
  [FieldDescriptorProto_Type.DOUBLE]: "double",
  [FieldDescriptorProto_Type.FLOAT]: "float",
  [FieldDescriptorProto_Type.INT64]: "int64",
  [FieldDescriptorProto_Type.UINT64]: "uint64",
  [FieldDescriptorProto_Type.INT32]: "int32",
  [FieldDescriptorProto_Type.FIXED64]: "fixed64",
  [FieldDescriptorProto_Type.FIXED32]: "fixed32",
  [FieldDescriptorProto_Type.BOOL]: "bool",
  [FieldDescriptorProto_Type.STRING]: "string",
  [FieldDescriptorProto_Type.BYTES]: "bytes",
  [FieldDescriptorProto_Type.UINT32]: "uint32",
  [FieldDescriptorProto_Type.SFIXED32]: "sfixed32",
  [FieldDescriptorProto_Type.SFIXED64]: "sfixed64",
  [FieldDescriptorProto_Type.SINT32]: "sint32",
  [FieldDescriptorProto_Type.SINT64]: "sint64",
};

/** A proto string literal: printable ASCII as is, everything else as octal UTF-8 bytes. */
function quote(text: string): string {
  let s = '"';
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte);
    if (c === '"' || c === "\\") s += `\\${c}`;
    else if (byte >= 0x20 && byte < 0x7f) s += c;
    else s += `\\${byte.toString(8).padStart(3, "0")}`;
  }
  return `${s}"`;
}

function typeOf(f: FieldDescriptorProto): string {
  const scalar = scalarNames[f.type];
  if (scalar !== undefined) return scalar;
  // Fully qualified, so the reader needs no scope rules.
  return f.typeName;
}

function fieldOptions(msg: DescriptorProto, f: FieldDescriptorProto) {
  const field = file_buf_validate_validate.messages
    .find((m) => m.name === msg.name)
    ?.fields.find((x) => x.number === f.number);
  const opts: string[] = [];
  if (field !== undefined) {
    for (const rule of getOption(field, predefined).cel) {
      opts.push(
        `(buf.validate.predefined).cel = {\n      id: ${quote(rule.id)}\n` +
          (rule.message === "" ? "" : `      message: ${quote(rule.message)}\n`) +
          `      expression: ${quote(rule.expression)}\n    }`,
      );
    }
  }
  if (isFieldSet(f, FieldDescriptorProtoSchema.field.defaultValue)) {
    opts.push(
      `default = ${f.type === FieldDescriptorProto_Type.STRING ? quote(f.defaultValue) : f.defaultValue}`,
    );
  }
  return opts.length === 0 ? "" : ` [\n    ${opts.join(",\n    ")}\n  ]`;
}

function printField(msg: DescriptorProto, f: FieldDescriptorProto, inOneof: boolean): string {
  const label = inOneof
    ? ""
    : f.label === FieldDescriptorProto_Label.REPEATED
      ? "repeated "
      : "optional ";
  return `${label}${typeOf(f)} ${f.name} = ${f.number}${fieldOptions(msg, f)};`;
}

function indent(text: string, by: string): string {
  return text
    .split("\n")
    .map((l) => (l === "" ? l : by + l))
    .join("\n");
}

function printMessage(msg: DescriptorProto): string {
  const lines: string[] = [];
  const printedOneofs = new Set<number>();
  for (const f of msg.field) {
    if (isFieldSet(f, FieldDescriptorProtoSchema.field.oneofIndex) && !f.proto3Optional) {
      if (printedOneofs.has(f.oneofIndex)) continue;
      printedOneofs.add(f.oneofIndex);
      const members = msg.field.filter(
        (x) =>
          isFieldSet(x, FieldDescriptorProtoSchema.field.oneofIndex) &&
          x.oneofIndex === f.oneofIndex,
      );
      const body = members.map((m) => printField(msg, m, true)).join("\n");
      lines.push(`oneof ${msg.oneofDecl[f.oneofIndex]?.name} {\n${indent(body, "  ")}\n}`);
      continue;
    }
    lines.push(printField(msg, f, false));
  }
  for (const r of msg.extensionRange) {
    lines.push(`extensions ${r.start} to ${r.end === 536870912 ? "max" : r.end - 1};`);
  }
  for (const r of msg.reservedRange) {
    lines.push(`reserved ${r.end - 1 === r.start ? r.start : `${r.start} to ${r.end - 1}`};`);
  }
  if (msg.reservedName.length > 0) {
    lines.push(`reserved ${msg.reservedName.map(quote).join(", ")};`);
  }
  return `message ${msg.name} {\n${indent(lines.join("\n"), "  ")}\n}`;
}

function printEnum(e: EnumDescriptorProto): string {
  const lines = e.value.map((v) => `${v.name} = ${v.number};`);
  for (const r of e.reservedRange) {
    lines.push(`reserved ${r.end === r.start ? r.start : `${r.start} to ${r.end}`};`);
  }
  if (e.reservedName.length > 0) {
    lines.push(`reserved ${e.reservedName.map(quote).join(", ")};`);
  }
  return `enum ${e.name} {\n${indent(lines.join("\n"), "  ")}\n}`;
}

function printFile(file: FileDescriptorProto): string {
  const o = file.options;
  const parts = [
    `// Copyright 2024-2026 Buf Technologies, Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//      http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Generated by scripts/protovalidate-proto.ts from the descriptor of
// @bufbuild/protovalidate ${pkg.version}; do not edit. Documentation:
// https://buf.build/bufbuild/protovalidate/docs/main:buf.validate`,
    `syntax = "${file.syntax === "" ? "proto2" : file.syntax}";`,
    `package ${file.package};`,
    file.dependency.map((d) => `import ${quote(d)};`).join("\n"),
    [
      `option go_package = ${quote(o?.goPackage ?? "")};`,
      `option java_multiple_files = ${o?.javaMultipleFiles === true};`,
      `option java_outer_classname = ${quote(o?.javaOuterClassname ?? "")};`,
      `option java_package = ${quote(o?.javaPackage ?? "")};`,
    ].join("\n"),
    ...file.extension.map(
      (x) => `extend ${x.extendee} {\n  optional ${typeOf(x)} ${x.name} = ${x.number};\n}`,
    ),
    ...file.messageType.map(printMessage),
    ...file.enumType.map(printEnum),
  ];
  return `${parts.join("\n\n")}\n`;
}

const text = printFile(file_buf_validate_validate.proto);
if (process.argv.includes("--check")) {
  if (readFileSync(out, "utf8") !== text) {
    console.error(
      `${out} differs from the descriptor of @bufbuild/protovalidate; run tsx scripts/protovalidate-proto.ts`,
    );
    process.exit(1);
  }
} else {
  writeFileSync(out, text);
}
