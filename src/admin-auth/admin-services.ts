import type { DescService } from "@bufbuild/protobuf";
import { TokenAdminService } from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";

/**
 * The services only an operator may call: the one list the credential check
 * follows. A later admin service is added here and nowhere else.
 */
export const ADMIN_SERVICES: readonly DescService[] = [UserKeyService, TokenAdminService];

const ADMIN_TYPE_NAMES: ReadonlySet<string> = new Set(ADMIN_SERVICES.map((s) => s.typeName));

/** Whether a call to this service (full proto name) needs an operator's credential. */
export function isAdminService(typeName: string): boolean {
  return ADMIN_TYPE_NAMES.has(typeName);
}
