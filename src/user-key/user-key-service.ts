import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  UserKeySchema,
  type UserKeyService,
} from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { checkEd25519PublicKey, keyFingerprint } from "../crypto/ed25519-verifier.js";
import type { AuditLog } from "../log/audit-event.js";
import type { PublicKeyStore, RegisteredKey } from "../store/public-key-store.js";
import { canonicalUserId } from "../token/user-id.js";

export interface UserKeyServiceOptions {
  store: PublicKeyStore;
  /** Where each call's audit line goes. Default: nowhere. */
  audit?: AuditLog;
}

/** Oldest first; keys without a known date last, by key, so a listing is stable. */
function byAdded(a: RegisteredKey, b: RegisteredKey): number {
  const left = a.addedAtMs ?? Number.POSITIVE_INFINITY;
  const right = b.addedAtMs ?? Number.POSITIVE_INFINITY;
  if (left !== right) {
    return left < right ? -1 : 1;
  }
  return a.publicKey < b.publicKey ? -1 : a.publicKey > b.publicKey ? 1 : 0;
}

/**
 * UserKeyService (internal only): registers the keys that sign a user's
 * requests, lists them, and removes them, which revokes the user's live
 * tokens (a removed key is usually a leaked one). The shape of `userId` and
 * `publicKey` is the proto's rules (src/validation/validation-interceptor.ts);
 * a key must also be a point that can sign safely.
 */
export function createUserKeyService(
  opts: UserKeyServiceOptions,
): ServiceImpl<typeof UserKeyService> {
  const { store } = opts;
  const audit: AuditLog = opts.audit ?? (() => {});
  return {
    async putUserKey(req, context) {
      const check = checkEd25519PublicKey(req.publicKey);
      if (!check.ok) {
        throw new ConnectError(`publicKey: ${check.reason}`, Code.InvalidArgument);
      }
      const userId = canonicalUserId(req.userId);
      const stored = (await store.put(userId, req.publicKey)) === "stored";
      audit(
        { audit: "PutUserKey", userId, fingerprint: keyFingerprint(req.publicKey), stored },
        context,
      );
      if (!stored) {
        throw new ConnectError(
          `publicKey: the user already has ${store.maxKeysPerUser} keys; delete one before adding another`,
          Code.FailedPrecondition,
        );
      }
      return {};
    },

    async deleteUserKey(req, context) {
      const userId = canonicalUserId(req.userId);
      const { removed, revokedTokens } = await store.delete(userId, req.publicKey);
      audit(
        {
          audit: "DeleteUserKey",
          userId,
          fingerprint: keyFingerprint(req.publicKey),
          removed,
          revokedTokens,
        },
        context,
      );
      return { revokedTokens };
    },

    async listUserKeys(req, context) {
      const userId = canonicalUserId(req.userId);
      const keys = (await store.list(userId)).sort(byAdded);
      audit({ audit: "ListUserKeys", userId, keys: keys.length }, context);
      return {
        keys: keys.map((key) =>
          create(UserKeySchema, {
            publicKey: key.publicKey,
            fingerprint: keyFingerprint(key.publicKey),
            addedAtMs: BigInt(key.addedAtMs ?? 0),
          }),
        ),
      };
    },
  };
}
