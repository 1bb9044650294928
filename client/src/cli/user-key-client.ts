import { UserKeyService } from "../gen/perps/token/v1/user_key_pb.js";
import {
  type AdminClientOptions,
  adminCall,
  createAdminServiceClient,
} from "./admin-service-client.js";

/** A registered key, as ListUserKeys answers it. */
export interface ListedKey {
  publicKey: string;
  fingerprint: string;
  /** Unix ms; undefined when the service did not record it. */
  addedAtMs: number | undefined;
}

/** Key registration on the internal listener; failures are TokenApiErrors, as on the SDK. */
export interface UserKeyClient {
  putUserKey(userId: string, publicKey: string): Promise<void>;
  /** Resolves with how many live tokens of the user were revoked with the key. */
  deleteUserKey(userId: string, publicKey: string): Promise<number>;
  listUserKeys(userId: string): Promise<ListedKey[]>;
}

/** UserKeyService over the Connect protocol (HTTP/1.1 and fetch). */
export function createUserKeyClient(opts: AdminClientOptions): UserKeyClient {
  const { client, callOptions } = createAdminServiceClient(UserKeyService, opts);
  return {
    async putUserKey(userId, publicKey) {
      await adminCall(client.putUserKey({ userId, publicKey }, callOptions));
    },
    async deleteUserKey(userId, publicKey) {
      const answer = await adminCall(client.deleteUserKey({ userId, publicKey }, callOptions));
      return answer.revokedTokens;
    },
    async listUserKeys(userId) {
      const { keys } = await adminCall(client.listUserKeys({ userId }, callOptions));
      return keys.map((key) => ({
        publicKey: key.publicKey,
        fingerprint: key.fingerprint,
        addedAtMs: key.addedAtMs === 0n ? undefined : Number(key.addedAtMs),
      }));
    },
  };
}
