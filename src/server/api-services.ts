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

/** Largest IntrospectToken request accepted (internal listener). */
const INTROSPECTION_READ_MAX_BYTES = 2 * 1024 * 1024;

/**
 * The contract's services and where each is served: the one list that
 * routing, the REST mapping, the operator check, grpc.health.v1 and
 * reflection follow (app.ts). A new service is one more entry here.
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
    // Any string a caller forwards answers `active: false`, not a size
    // error: up to 2 MiB here (gRPC's own default is 4 MiB).
    servedService(TokenIntrospectionService, impl.introspection, {
      listeners: ["internal"],
      readMaxBytes: INTROSPECTION_READ_MAX_BYTES,
    }),
  ];
}
