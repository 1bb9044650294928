import type {
  DescEnum,
  DescEnumValue,
  DescField,
  DescMessage,
  DescMethod,
  DescService,
  Registry,
} from "@bufbuild/protobuf";
import {
  DescriptorProtoSchema,
  EnumDescriptorProtoSchema,
  FileDescriptorProtoSchema,
  ServiceDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";

/** A descriptor whose proto comment can become an OpenAPI description. */
export type CommentedDesc =
  | DescService
  | DescMethod
  | DescMessage
  | DescField
  | DescEnum
  | DescEnumValue;

/** Finds the comment of a descriptor; undefined when it has none. */
export type CommentSource = (desc: CommentedDesc) => string | undefined;

/**
 * The comment of a descriptor from the source info of its own file. The
 * descriptors protoc-gen-es embeds in generated code carry no source info,
 * so for them this finds nothing (see commentsFromRegistry).
 */
export const sourceInfoComments: CommentSource = (desc) => {
  const location = locationOf(desc);
  const text = location?.leadingComments || location?.trailingComments || "";
  return cleanComment(text);
};

/**
 * Comments looked up by full name in another registry, e.g. one built from a
 * `buf build` image that kept its source info: the descriptors the gateway
 * serves stay the embedded ones, only their comments come from the image.
 */
export function commentsFromRegistry(registry: Registry): CommentSource {
  return (desc) => {
    const twin = twinOf(registry, desc);
    return twin === undefined ? undefined : sourceInfoComments(twin);
  };
}

function twinOf(registry: Registry, desc: CommentedDesc): CommentedDesc | undefined {
  switch (desc.kind) {
    case "service":
      return registry.getService(desc.typeName);
    case "rpc":
      return registry.getService(desc.parent.typeName)?.methods.find((m) => m.name === desc.name);
    case "message":
      return registry.getMessage(desc.typeName);
    case "field":
      return registry.getMessage(desc.parent.typeName)?.fields.find((f) => f.name === desc.name);
    case "enum":
      return registry.getEnum(desc.typeName);
    case "enum_value":
      return registry.getEnum(desc.parent.typeName)?.values.find((v) => v.name === desc.name);
  }
}

function locationOf(desc: CommentedDesc) {
  const file = desc.kind === "field" || desc.kind === "rpc" ? desc.parent.file : fileOf(desc);
  const path = sourcePath(desc);
  return file.proto.sourceCodeInfo?.location.find(
    (l) => l.path.length === path.length && l.path.every((n, i) => n === path[i]),
  );
}

function fileOf(desc: DescService | DescMessage | DescEnum | DescEnumValue) {
  return desc.kind === "enum_value" ? desc.parent.file : desc.file;
}

// The path of an element in SourceCodeInfo: field numbers and indexes from
// the FileDescriptorProto down (descriptor.proto, SourceCodeInfo.Location.path).
function sourcePath(desc: CommentedDesc): number[] {
  const [parent, field, siblings] = placeOf(desc);
  const parentPath = parent === undefined ? [] : sourcePath(parent);
  return [...parentPath, field.number, siblings.indexOf(desc.proto)];
}

type Place = [parent: CommentedDesc | undefined, field: DescField, siblings: readonly unknown[]];

// Where an element is declared: its parent (none for the file's own), the
// descriptor.proto field that lists it there, and that list.
function placeOf(desc: CommentedDesc): Place {
  switch (desc.kind) {
    case "service":
      return [undefined, FileDescriptorProtoSchema.field.service, desc.file.proto.service];
    case "rpc":
      return [desc.parent, ServiceDescriptorProtoSchema.field.method, desc.parent.proto.method];
    case "message":
      return declaredIn(desc, "messageType", "nestedType");
    case "field":
      return [desc.parent, DescriptorProtoSchema.field.field, desc.parent.proto.field];
    case "enum":
      return declaredIn(desc, "enumType", "enumType");
    case "enum_value":
      return [desc.parent, EnumDescriptorProtoSchema.field.value, desc.parent.proto.value];
  }
}

// A message or an enum is declared in its file or nested in a message, each
// listing it under a field of its own.
function declaredIn(
  desc: DescMessage | DescEnum,
  inFile: "messageType" | "enumType",
  inMessage: "nestedType" | "enumType",
): Place {
  return desc.parent === undefined
    ? [undefined, FileDescriptorProtoSchema.field[inFile], desc.file.proto[inFile]]
    : [desc.parent, DescriptorProtoSchema.field[inMessage], desc.parent.proto[inMessage]];
}

/** `// text` comes as " text" per line; drops that space and blank edges. */
function cleanComment(text: string): string | undefined {
  const lines = text.split("\n").map((line) => line.replace(/^ /, "").trimEnd());
  const cleaned = lines.join("\n").trim();
  return cleaned === "" ? undefined : cleaned;
}
