import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  ServerReflection as ReflectionV1,
  type ServerReflectionRequestSchema,
  type ServerReflectionResponse,
} from "../../../src/gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1Alpha } from "../../../src/gen/grpc/reflection/v1alpha/reflection_pb.js";
import { Health } from "../../../src/gen/health/v1/health_pb.js";
import { createGrpcReflection } from "../../../src/server/grpc-standard-services.js";

const reflection = createGrpcReflection({ services: [TokenService, Health] });
const transport = createRouterTransport((router) =>
  router.service(ReflectionV1, reflection.v1).service(ReflectionV1Alpha, reflection.v1alpha),
);
const v1 = createClient(ReflectionV1, transport);

type Request = MessageInitShape<typeof ServerReflectionRequestSchema>;

/** The answers to these requests, sent on one stream, as a reflection client sends them. */
async function asked(...requests: Request[]): Promise<ServerReflectionResponse[]> {
  async function* sent() {
    yield* requests;
  }
  const answers: ServerReflectionResponse[] = [];
  for await (const answer of v1.serverReflectionInfo(sent())) {
    answers.push(answer);
  }
  return answers;
}

/** The files of a file descriptor answer, by name. */
function fileNames(answer: ServerReflectionResponse | undefined): string[] {
  const response = answer?.messageResponse;
  assert.equal(response?.case, "fileDescriptorResponse");
  return response.value.fileDescriptorProto.map(
    (bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name,
  );
}

/** The error code of an error answer. */
function errorCode(answer: ServerReflectionResponse | undefined): number | undefined {
  const response = answer?.messageResponse;
  return response?.case === "errorResponse" ? response.value.errorCode : undefined;
}

describe("gRPC server reflection", () => {
  it("lists exactly the services given, and itself", async () => {
    const [answer] = await asked({
      host: "h",
      messageRequest: { case: "listServices", value: "" },
    });
    assert.equal(answer?.validHost, "h");
    assert.equal(answer?.originalRequest?.host, "h");
    const response = answer?.messageResponse;
    assert.equal(response?.case, "listServicesResponse");
    assert.deepEqual(
      response.value.service.map((s) => s.name),
      [TokenService.typeName, Health.typeName, ReflectionV1.typeName, ReflectionV1Alpha.typeName],
    );
  });

  it("describes the file of a service, a message or a method, with every file it imports", async () => {
    const answers = await asked(
      { messageRequest: { case: "fileContainingSymbol", value: TokenService.typeName } },
      {
        messageRequest: {
          case: "fileContainingSymbol",
          value: "perps.token.v1.CreateTokenRequest",
        },
      },
      {
        messageRequest: {
          case: "fileContainingSymbol",
          value: `${TokenService.typeName}.CreateToken`,
        },
      },
    );
    for (const answer of answers) {
      const names = fileNames(answer);
      assert.equal(names[0], TokenService.file.proto.name);
      // Its imports come with it, so the client can resolve every type.
      assert.ok(TokenService.file.dependencies.length > 0);
      for (const dependency of TokenService.file.dependencies) {
        assert.ok(names.includes(dependency.proto.name), `${dependency.proto.name} in ${names}`);
      }
      // And theirs: descriptor.proto is imported by the imports only.
      assert.ok(names.includes("google/protobuf/descriptor.proto"), `${names}`);
      assert.equal(new Set(names).size, names.length, "each file once");
    }
  });

  it("describes a file by its name", async () => {
    const [answer] = await asked({
      messageRequest: { case: "fileByFilename", value: Health.file.proto.name },
    });
    assert.deepEqual(fileNames(answer), [Health.file.proto.name]);
  });

  it("answers NOT_FOUND for what it does not describe, on the same stream", async () => {
    const answers = await asked(
      { messageRequest: { case: "fileContainingSymbol", value: "nope.Service" } },
      {
        messageRequest: {
          case: "fileContainingSymbol",
          value: `${TokenService.typeName}.NoSuchMethod`,
        },
      },
      { messageRequest: { case: "fileByFilename", value: "nope.proto" } },
      {
        messageRequest: {
          case: "fileContainingExtension",
          value: { containingType: "perps.token.v1.CreateTokenRequest", extensionNumber: 1000 },
        },
      },
    );
    assert.deepEqual(answers.map(errorCode), [5, 5, 5, 5]);
  });

  it("answers UNIMPLEMENTED for extension numbers, and INVALID_ARGUMENT for an empty request", async () => {
    const answers = await asked(
      {
        messageRequest: {
          case: "allExtensionNumbersOfType",
          value: "perps.token.v1.CreateTokenRequest",
        },
      },
      {},
    );
    assert.deepEqual(answers.map(errorCode), [12, 3]);
  });

  it("answers v1alpha as v1", async () => {
    const alpha = createClient(ReflectionV1Alpha, transport);
    async function* sent() {
      yield { messageRequest: { case: "listServices" as const, value: "" } };
    }
    const names: string[] = [];
    for await (const answer of alpha.serverReflectionInfo(sent())) {
      const response = answer.messageResponse;
      assert.equal(response.case, "listServicesResponse");
      names.push(...response.value.service.map((s) => s.name));
    }
    assert.ok(names.includes(TokenService.typeName));
  });
});
