import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import {
  type CreateTokenRequest,
  type DeleteTokenRequest,
  TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import type { GrpcClient } from "./grpc-client.js";

/** TokenService's create and delete on one protocol, each answer read as the suite compares it. */
export interface ProtocolCalls<Answer> {
  readonly name: string;
  createToken(req: Partial<Omit<CreateTokenRequest, "$typeName">>): Promise<Answer>;
  deleteToken(req: Partial<Omit<DeleteTokenRequest, "$typeName">>): Promise<Answer>;
}

/**
 * CreateToken and DeleteToken on the public listener over REST, Connect,
 * gRPC and gRPC-Web (HTTP/1.1 where there is a choice): `rest` reads a REST
 * answer, `refusal` the failure of an RPC.
 */
export function tokenCallsOnEveryProtocol<Answer>(
  publicUrl: string,
  grpc: GrpcClient<typeof TokenService.method>,
  rest: (method: string, req: object) => Promise<Answer>,
  refusal: (call: Promise<unknown>) => Promise<Answer>,
): ProtocolCalls<Answer>[] {
  const connect = createClient(
    TokenService,
    createConnectTransport({ baseUrl: publicUrl, httpVersion: "1.1" }),
  );
  const grpcWeb = createClient(
    TokenService,
    createGrpcWebTransport({ baseUrl: publicUrl, httpVersion: "1.1" }),
  );
  return [
    {
      name: "REST",
      createToken: (req) => rest("POST", req),
      deleteToken: (req) => rest("DELETE", req),
    },
    {
      name: "Connect",
      createToken: (req) => refusal(connect.createToken(req)),
      deleteToken: (req) => refusal(connect.deleteToken(req)),
    },
    {
      name: "gRPC",
      createToken: (req) => refusal(grpc.createToken(req)),
      deleteToken: (req) => refusal(grpc.deleteToken(req)),
    },
    {
      name: "gRPC-Web",
      createToken: (req) => refusal(grpcWeb.createToken(req)),
      deleteToken: (req) => refusal(grpcWeb.deleteToken(req)),
    },
  ];
}
