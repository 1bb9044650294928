import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { checkEd25519PublicKey } from "../crypto/ed25519-public-key.js";
import type { UserKeyService } from "../gen/perps/token/v1/user_key_pb.js";
import type { UserKeyStore } from "../store/user-key-store.js";
import { userKeyOf } from "../token/user-id.js";

export interface UserKeyServiceOptions {
  store: UserKeyStore;
}

/**
 * UserKeyService (internal only): registers the keys that sign a user's
 * requests. The shape of `userId` and `publicKey` is the proto's rules
 * (src/validation/validation-interceptor.ts); a key must also be a point
 * that can sign safely.
 */
export function createUserKeyService(
  opts: UserKeyServiceOptions,
): ServiceImpl<typeof UserKeyService> {
  const { store } = opts;
  return {
    async putUserKey(req) {
      const check = checkEd25519PublicKey(req.publicKey);
      if (!check.ok) {
        throw new ConnectError(`publicKey: ${check.reason}`, Code.InvalidArgument);
      }
      if ((await store.put(userKeyOf(req.userId), req.publicKey)) === "limit") {
        throw new ConnectError(
          `publicKey: the user already has ${store.maxKeysPerUser} keys; delete one before adding another`,
          Code.FailedPrecondition,
        );
      }
      return {};
    },

    async deleteUserKey(req) {
      await store.delete(userKeyOf(req.userId), req.publicKey);
      return {};
    },
  };
}
