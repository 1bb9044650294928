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
  switch (desc.kind) {
    case "service":
      return [
        FileDescriptorProtoSchema.field.service.number,
        desc.file.proto.service.indexOf(desc.proto),
      ];
    case "rpc":
      return [
        ...sourcePath(desc.parent),
        ServiceDescriptorProtoSchema.field.method.number,
        desc.parent.proto.method.indexOf(desc.proto),
      ];
    case "message":
      return desc.parent === undefined
        ? [
            FileDescriptorProtoSchema.field.messageType.number,
            desc.file.proto.messageType.indexOf(desc.proto),
          ]
        : [
            ...sourcePath(desc.parent),
            DescriptorProtoSchema.field.nestedType.number,
            desc.parent.proto.nestedType.indexOf(desc.proto),
          ];
    case "field":
      return [
        ...sourcePath(desc.parent),
        DescriptorProtoSchema.field.field.number,
        desc.parent.proto.field.indexOf(desc.proto),
      ];
    case "enum":
      return desc.parent === undefined
        ? [
            FileDescriptorProtoSchema.field.enumType.number,
            desc.file.proto.enumType.indexOf(desc.proto),
          ]
        : [
            ...sourcePath(desc.parent),
            DescriptorProtoSchema.field.enumType.number,
            desc.parent.proto.enumType.indexOf(desc.proto),
          ];
    case "enum_value":
      return [
        ...sourcePath(desc.parent),
        EnumDescriptorProtoSchema.field.value.number,
        desc.parent.proto.value.indexOf(desc.proto),
      ];
  }
}

/** `// text` comes as " text" per line; drops that space and blank edges. */
function cleanComment(text: string): string | undefined {
  const lines = text.split("\n").map((line) => line.replace(/^ /, "").trimEnd());
  const cleaned = lines.join("\n").trim();
  return cleaned === "" ? undefined : cleaned;
}
