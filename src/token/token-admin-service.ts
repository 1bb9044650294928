import type { ServiceImpl } from "@connectrpc/connect";
import type { TokenAdminService } from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import type { AuditLog } from "../log/audit-event.js";
import type { TokenStore } from "../store/token-store.js";
import { canonicalUserId } from "./user-id.js";

export interface TokenAdminServiceOptions {
  store: TokenStore;
  /** Where each call's audit line goes. Default: nowhere. */
  audit?: AuditLog;
}

/**
 * TokenAdminService (internal only): an operator's incident tools. Revoking
 * a user's tokens is one atomic script, so a token created meanwhile is
 * either revoked or created after the revocation, never half of each.
 */
export function createTokenAdminService(
  opts: TokenAdminServiceOptions,
): ServiceImpl<typeof TokenAdminService> {
  const { store } = opts;
  const audit: AuditLog = opts.audit ?? (() => {});
  return {
    async revokeUserTokens(req, context) {
      const userId = canonicalUserId(req.userId);
      const revokedTokens = await store.revokeAll(userId);
      audit({ audit: "RevokeUserTokens", userId, revokedTokens }, context);
      return { revokedTokens };
    },
  };
}
