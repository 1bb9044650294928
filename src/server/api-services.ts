import type { ServiceImpl } from "@connectrpc/connect";
import { TokenAdminService } from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { type ServedService, servedService } from "./served-service.js";

/** The implementations of the contract's services. */
export interface ApiImplementations {
  token: Partial<ServiceImpl<typeof TokenService>>;
  userKey: Partial<ServiceImpl<typeof UserKeyService>>;
  tokenAdmin: Partial<ServiceImpl<typeof TokenAdminService>>;
  introspection: Partial<ServiceImpl<typeof TokenIntrospectionService>>;
}

/**
 * Largest IntrospectToken request accepted (internal listener): a token is 89
 * characters, yet any string a caller forwards must answer `active: false`,
 * not a size error. 64 KiB holds any header value the usual proxies pass on
 * (Envoy's default limit is 60 KiB for all headers, nginx's 8 KiB a line,
 * Node's 16 KiB), and is the 64 KiB per stream docs/security.md promises.
 */
const INTROSPECTION_READ_MAX_BYTES = 64 * 1024;

/**
 * The contract's services and where each is served: the one list that
 * routing, the REST mapping, the operator and service credential checks,
 * grpc.health.v1 and reflection follow (app.ts). A new service is one more entry here.
 */
export function apiServices(impl: ApiImplementations): readonly ServedService[] {
  return [
    servedService(TokenService, impl.token, {
      listeners: ["public", "internal"],
      rest: ["public"],
    }),
    servedService(UserKeyService, impl.userKey, { listeners: ["internal"], operatorOnly: true }),
    servedService(TokenAdminService, impl.tokenAdmin, {
      listeners: ["internal"],
      operatorOnly: true,
    }),
    servedService(TokenIntrospectionService, impl.introspection, {
      listeners: ["internal"],
      serviceCredential: true,
      readMaxBytes: INTROSPECTION_READ_MAX_BYTES,
    }),
  ];
}
