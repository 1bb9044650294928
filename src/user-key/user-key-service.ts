import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { checkEd25519PublicKey } from "../crypto/ed25519-public-key.js";
import type { UserKeyService } from "../gen/perps/token/v1/user_key_pb.js";
import type { UserKeyStore } from "../store/user-key-store.js";
import { isValidUserId, userKeyOf } from "../token/user-id.js";

export interface UserKeyServiceOptions {
  store: UserKeyStore;
}

function checkUserId(userId: string): void {
  if (!isValidUserId(userId)) {
    throw new ConnectError(
      "user_id: must be a UUID (version 1-8, variant 8, 9, a or b; or the nil or all-f UUID)",
      Code.InvalidArgument,
    );
  }
}

/** UserKeyService (internal only): registers the keys that sign a user's requests. */
export function createUserKeyService(
  opts: UserKeyServiceOptions,
): ServiceImpl<typeof UserKeyService> {
  const { store } = opts;
  return {
    async putUserKey(req) {
      checkUserId(req.userId);
      const check = checkEd25519PublicKey(req.publicKey);
      if (!check.ok) {
        throw new ConnectError(`public_key: ${check.reason}`, Code.InvalidArgument);
      }
      if ((await store.put(userKeyOf(req.userId), req.publicKey)) === "limit") {
        throw new ConnectError(
          `public_key: the user already has ${store.maxKeysPerUser} keys; delete one before adding another`,
          Code.FailedPrecondition,
        );
      }
      return {};
    },

    async deleteUserKey(req) {
      checkUserId(req.userId);
      if (!/^[0-9a-f]{64}$/.test(req.publicKey)) {
        throw new ConnectError(
          "public_key: must be 64 lowercase hex characters",
          Code.InvalidArgument,
        );
      }
      await store.delete(userKeyOf(req.userId), req.publicKey);
      return {};
    },
  };
}
