// The standard gRPC services the internal listener serves beside the API's:
// grpc.health.v1, which balancers and orchestrators ask whether the service
// can work, and server reflection (grpc.reflection.v1 and v1alpha), which
// lets `buf curl` and `grpcurl` call it without the proto files.

import {
  create,
  createRegistry,
  type DescFile,
  type DescService,
  type Registry,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { ServerReflection as ReflectionV1 } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1Alpha } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import {
  type Health,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../gen/health/v1/health_pb.js";
import type { ReadinessProbe } from "./readiness.js";

// Health.

export interface GrpcHealthOptions {
  ready: ReadinessProbe;
  /** Names of the services served next to it; "" stands for the whole server. */
  services: string[];
  /** How often a Watch stream re-checks. Default 1000 ms. */
  watchIntervalMs?: number;
  /**
   * Aborted when the service starts stopping: every Watch stream is told
   * NOT_SERVING at once (`ready` says so from then on) and is then ended, so
   * that client-side balancers move away and no stream holds the stop.
   * Default: never.
   */
  stopping?: AbortSignal;
}

/** Resolves after `ms`, or as soon as one of `signals` is aborted. */
function sleep(ms: number, signals: readonly AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const signal of signals) {
        signal.removeEventListener("abort", done);
      }
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const signal of signals) {
      signal.addEventListener("abort", done, { once: true });
    }
  });
}

/** The standard grpc.health.v1.Health service: SERVING while Redis answers and the service is not stopping. */
export function createGrpcHealth(opts: GrpcHealthOptions): ServiceImpl<typeof Health> {
  const known = new Set(["", ...opts.services]);
  const interval = opts.watchIntervalMs ?? 1000;
  const status = async () =>
    (await opts.ready()) === "not ready" ? ServingStatus.NOT_SERVING : ServingStatus.SERVING;

  return {
    async check(req) {
      if (!known.has(req.service)) {
        throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      }
      return create(HealthCheckResponseSchema, { status: await status() });
    },

    async list() {
      const current = await status();
      return {
        statuses: Object.fromEntries(
          [...known].map((name) => [name, create(HealthCheckResponseSchema, { status: current })]),
        ),
      };
    },

    async *watch(req, ctx) {
      if (!known.has(req.service)) {
        yield create(HealthCheckResponseSchema, { status: ServingStatus.SERVICE_UNKNOWN });
        return;
      }
      const signals = opts.stopping === undefined ? [ctx.signal] : [ctx.signal, opts.stopping];
      let last: ServingStatus | undefined;
      while (!ctx.signal.aborted) {
        const current = await status();
        if (current !== last) {
          last = current;
          yield create(HealthCheckResponseSchema, { status: current });
        }
        if (opts.stopping?.aborted === true) {
          // Stopping: the watcher is told NOT_SERVING (if the stop came
          // after the status above), then the stream ends, status OK.
          if (last !== ServingStatus.NOT_SERVING) {
            yield create(HealthCheckResponseSchema, { status: ServingStatus.NOT_SERVING });
          }
          return;
        }
        await sleep(interval, signals);
      }
    },
  };
}

// Server reflection.

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
