import { TokenAdminService } from "../gen/perps/token/v1/token_admin_pb.js";
import {
  type AdminClientOptions,
  adminCall,
  createAdminServiceClient,
} from "./admin-service-client.js";

/** An operator's incident tools on the internal listener; failures are TokenApiErrors, as on the SDK. */
export interface TokenAdminClient {
  /** Resolves with how many live tokens of the user were revoked. */
  revokeUserTokens(userId: string): Promise<number>;
}

/** TokenAdminService over the Connect protocol (HTTP/1.1 and fetch), as the key commands call. */
export function createTokenAdminClient(opts: AdminClientOptions): TokenAdminClient {
  const { client, callOptions } = createAdminServiceClient(TokenAdminService, opts);
  return {
    async revokeUserTokens(userId) {
      return (await adminCall(client.revokeUserTokens({ userId }, callOptions))).revokedTokens;
    },
  };
}
