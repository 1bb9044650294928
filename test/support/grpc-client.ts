import {
  create,
  type DescMessage,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import * as grpc from "@grpc/grpc-js";

/** Promise-style calls of one service over @grpc/grpc-js (the client our internal callers use). */
export type GrpcClient<M extends GenServiceMethods> = {
  [K in keyof M]: (
    req: MessageInitShape<M[K]["input"]>,
    metadata?: grpc.Metadata,
  ) => Promise<MessageShape<M[K]["output"]>>;
} & { close(): void };

/**
 * A @grpc/grpc-js client for the unary methods of a protobuf-es service
 * descriptor, with protobuf-es doing the (de)serialisation.
 */
export function createGrpcClient<M extends GenServiceMethods>(
  service: GenService<M>,
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  options: grpc.ChannelOptions = {},
): GrpcClient<M> {
  const unary = service.methods.filter((m) => m.methodKind === "unary");
  const definition: grpc.ServiceDefinition = Object.fromEntries(
    unary.map((method) => [
      method.localName,
      {
        path: `/${service.typeName}/${method.name}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (msg: MessageShape<DescMessage>) =>
          Buffer.from(toBinary(method.input, msg)),
        requestDeserialize: (bytes: Buffer) => fromBinary(method.input, bytes),
        responseSerialize: (msg: MessageShape<DescMessage>) =>
          Buffer.from(toBinary(method.output, msg)),
        responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
      },
    ]),
  );
  const Client = grpc.makeGenericClientConstructor(definition, service.typeName);
  const client = new Client(address, credentials, options);
  const calls: Record<string, unknown> = {
    close: () => client.close(),
  };
  for (const method of unary) {
    const fn = client[method.localName] as unknown as (
      req: unknown,
      metadata: grpc.Metadata,
      options: grpc.CallOptions,
      callback: (err: grpc.ServiceError | null, res: unknown) => void,
    ) => void;
    calls[method.localName] = (
      req: MessageInitShape<DescMessage>,
      metadata = new grpc.Metadata(),
    ) =>
      new Promise((resolve, reject) => {
        fn.call(
          client,
          create(method.input, req),
          metadata,
          { deadline: Date.now() + 10_000 },
          (err, res) => (err === null ? resolve(res) : reject(err)),
        );
      });
  }
  return calls as GrpcClient<M>;
}

/** True when `err` is a gRPC error with this status code. */
export function isGrpcError(err: unknown, code: grpc.status): err is grpc.ServiceError {
  return typeof err === "object" && err !== null && "code" in err && err.code === code;
}
