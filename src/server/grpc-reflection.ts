import {
  createRegistry,
  type DescFile,
  type DescService,
  type Registry,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { ServerReflection as ReflectionV1 } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1Alpha } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";

/** A reflection request of either version: both have the same fields. */
interface ReflectionRequest {
  host: string;
  messageRequest:
    | {
        case:
          | "fileByFilename"
          | "fileContainingSymbol"
          | "allExtensionNumbersOfType"
          | "listServices";
        value: string;
      }
    | {
        case: "fileContainingExtension";
        value: { containingType: string; extensionNumber: number };
      }
    | { case: undefined; value?: undefined };
}

type ReflectionAnswer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

// gRPC status codes used in error responses.
const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;
const UNIMPLEMENTED = 12;

export interface GrpcReflectionOptions {
  /** The services served next to reflection; their files and dependencies are described. */
  services: readonly DescService[];
}

export interface GrpcReflection {
  v1: ServiceImpl<typeof ReflectionV1>;
  v1alpha: ServiceImpl<typeof ReflectionV1Alpha>;
}

/** Every file of `files` and, transitively, the files they import, each once. */
function withDependencies(files: readonly DescFile[]): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (!seen.has(file.name)) {
      seen.set(file.name, file);
      file.dependencies.forEach(visit);
    }
  };
  files.forEach(visit);
  return [...seen.values()];
}

function fileOfSymbol(registry: Registry, symbol: string): DescFile | undefined {
  const type = registry.get(symbol);
  if (type !== undefined) {
    return type.file;
  }
  // A method: "<service>.<method>".
  const service = registry.getService(symbol.slice(0, symbol.lastIndexOf(".")));
  return service?.methods.some((m) => `${service.typeName}.${m.name}` === symbol) === true
    ? service.file
    : undefined;
}

/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha), so `buf curl` and
 * `grpcurl` can list and call the services without the proto files. It
 * describes exactly the services given, from the descriptors compiled in.
 */
export function createGrpcReflection(opts: GrpcReflectionOptions): GrpcReflection {
  const services = [...opts.services, ReflectionV1, ReflectionV1Alpha];
  const files = withDependencies(services.map((s) => s.file));
  const registry = createRegistry(...files);
  const byFilename = new Map(files.map((f) => [f.proto.name, f]));
  const encoded = new Map<DescFile, Uint8Array>();
  const encode = (file: DescFile) => {
    let bytes = encoded.get(file);
    if (bytes === undefined) {
      bytes = toBinary(FileDescriptorProtoSchema, file.proto);
      encoded.set(file, bytes);
    }
    return bytes;
  };
  // A file is sent with everything it imports, so the client can resolve it.
  const describe = (file: DescFile): ReflectionAnswer => ({
    case: "fileDescriptorResponse",
    value: { fileDescriptorProto: withDependencies([file]).map(encode) },
  });
  const error = (errorCode: number, errorMessage: string): ReflectionAnswer => ({
    case: "errorResponse",
    value: { errorCode, errorMessage },
  });

  function answer(req: ReflectionRequest): ReflectionAnswer {
    const request = req.messageRequest;
    switch (request.case) {
      case "listServices":
        return {
          case: "listServicesResponse",
          value: { service: services.map((s) => ({ name: s.typeName })) },
        };
      case "fileByFilename": {
        const file = byFilename.get(request.value);
        return file === undefined ? error(NOT_FOUND, `no file ${request.value}`) : describe(file);
      }
      case "fileContainingSymbol": {
        const file = fileOfSymbol(registry, request.value);
        return file === undefined ? error(NOT_FOUND, `no symbol ${request.value}`) : describe(file);
      }
      case "fileContainingExtension": {
        const message = registry.getMessage(request.value.containingType);
        const extension =
          message === undefined
            ? undefined
            : registry.getExtensionFor(message, request.value.extensionNumber);
        return extension === undefined
          ? error(NOT_FOUND, "no such extension")
          : describe(extension.file);
      }
      case "allExtensionNumbersOfType":
        return error(UNIMPLEMENTED, "extension numbers are not listed");
      default:
        return error(INVALID_ARGUMENT, "empty reflection request");
    }
  }

  return {
    v1: {
      async *serverReflectionInfo(requests) {
        for await (const req of requests) {
          yield { validHost: req.host, originalRequest: req, messageResponse: answer(req) };
        }
      },
    },
    v1alpha: {
      async *serverReflectionInfo(requests) {
        for await (const req of requests) {
          yield { validHost: req.host, originalRequest: req, messageResponse: answer(req) };
        }
      },
    },
  };
}
