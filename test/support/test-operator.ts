import { createHash } from "node:crypto";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { Interceptor as ConnectInterceptor } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import type { OperatorLookup } from "../../src/admin-auth/call-gate.js";
import {
  credentialLookup,
  credentialsLine,
  parseCredentialsFile,
} from "../../src/admin-auth/credentials-file.js";
import { createGrpcClient, type GrpcClient } from "./grpc-client.js";

/** The operator every test service knows (startTestService). */
export const TEST_OPERATOR = { name: "test-operator", secret: "op_secret-of-the-test-operator" };

/** The SHA-256 (hex) of a secret, as a credentials file holds it. */
export function secretHash(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** A credentials file's text listing these operators. */
export function credentialsText(operators: readonly { name: string; secret: string }[]): string {
  return `${operators.map((o) => credentialsLine(o.name, secretHash(o.secret))).join("\n")}\n`;
}

/** The lookup of a test service: the test operator only, through the service's own parser and compare. */
export function testOperatorLookup(): OperatorLookup {
  return credentialLookup(parseCredentialsFile(credentialsText([TEST_OPERATOR]), "test"));
}

/** The header an admin call sends (fetch, Connect), with the test operator's secret by default. */
export function operatorHeaders(secret = TEST_OPERATOR.secret): { authorization: string } {
  return { authorization: `Bearer ${secret}` };
}

/** A Connect client interceptor sending the operator's credential. */
export function operatorConnectInterceptor(secret = TEST_OPERATOR.secret): ConnectInterceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${secret}`);
    return next(req);
  };
}

/** A @grpc/grpc-js client interceptor sending the operator's credential (option `interceptors`). */
export function operatorGrpcInterceptor(secret = TEST_OPERATOR.secret): grpc.Interceptor {
  return (callOptions, nextCall) =>
    new grpc.InterceptingCall(nextCall(callOptions), {
      start(metadata, listener, next) {
        metadata.set("authorization", `Bearer ${secret}`);
        next(metadata, listener);
      },
    });
}

/** A @grpc/grpc-js client (createGrpcClient) whose every call sends the operator's credential. */
export function createOperatorGrpcClient<M extends GenServiceMethods>(
  service: GenService<M>,
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  options: grpc.ChannelOptions = {},
  secret = TEST_OPERATOR.secret,
): GrpcClient<M> {
  return createGrpcClient(service, address, credentials, {
    ...options,
    interceptors: [operatorGrpcInterceptor(secret)],
  });
}
