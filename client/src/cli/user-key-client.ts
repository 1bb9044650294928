import { createClient } from "@connectrpc/connect";
import { UserKeyService } from "../gen/perps/token/v1/user_key_pb.js";
import { fromConnectError } from "../sdk/connect-error-mapping.js";
import { createFetchConnectTransport } from "../sdk/connect-transport.js";
import { operatorAuthorization } from "../sdk/operator-authorization.js";

/** Options of {@link createUserKeyClient}. */
export interface UserKeyClientOptions {
  /** Base URL of the internal listener. */
  baseUrl: string;
  /** Deadline of each call in milliseconds. Default 10000. */
  timeoutMs?: number;
  /** The operator's secret, sent with every call. Default none (the service refuses the call). */
  operatorSecret?: string;
}

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

/**
 * UserKeyService over the Connect protocol (HTTP/1.1 and fetch): nothing to
 * keep open, so a one-shot command exits as soon as it is done.
 */
export function createUserKeyClient(opts: UserKeyClientOptions): UserKeyClient {
  const client = createClient(
    UserKeyService,
    createFetchConnectTransport({
      baseUrl: opts.baseUrl,
      fetch: (input, init) => globalThis.fetch(input, init),
      interceptors: operatorAuthorization(opts.operatorSecret),
    }),
  );
  const callOptions = { timeoutMs: opts.timeoutMs ?? 10_000 };
  return {
    async putUserKey(userId, publicKey) {
      try {
        await client.putUserKey({ userId, publicKey }, callOptions);
      } catch (err) {
        throw fromConnectError(err);
      }
    },
    async deleteUserKey(userId, publicKey) {
      try {
        return (await client.deleteUserKey({ userId, publicKey }, callOptions)).revokedTokens;
      } catch (err) {
        throw fromConnectError(err);
      }
    },
    async listUserKeys(userId) {
      try {
        const { keys } = await client.listUserKeys({ userId }, callOptions);
        return keys.map((key) => ({
          publicKey: key.publicKey,
          fingerprint: key.fingerprint,
          addedAtMs: key.addedAtMs === 0n ? undefined : Number(key.addedAtMs),
        }));
      } catch (err) {
        throw fromConnectError(err);
      }
    },
  };
}
