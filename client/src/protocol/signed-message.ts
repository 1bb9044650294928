const encoder = new TextEncoder();

/** The fields of a create request that its signature covers, as sent. */
export interface CreateTokenMessageFields {
  timestamp: bigint;
  userId: string;
  /** Undefined when the request omitted it: its slot stays empty even though it defaults. */
  expiresIn: bigint | undefined;
  name: string | undefined;
  /** As sent, in its order; undefined or empty when the request has none. */
  scopes?: readonly string[] | undefined;
  /** As sent, in its order; undefined or empty when the request has none. */
  allowedIps?: readonly string[] | undefined;
}

/** The fields of a delete request that its signature covers, as sent. */
export interface DeleteTokenMessageFields {
  timestamp: bigint;
  tokenId: string;
  userId: string;
}

/**
 * `createToken:<timestamp>:<expiresIn>:<name>:<userId>`: the seed's data
 * fields in alphabetical order of their keys; an omitted field leaves an
 * empty slot. With `scopes` or `allowedIps`, each list joined by `,` in the
 * order sent is appended, an absent one as an empty slot:
 * `...:<userId>:<scopes>:<allowedIps>`. Unambiguous: the name is the only
 * free text, and neither list holds a `-`, so the user id is the message's
 * last UUID-shaped segment; a message that ends in one is the seed's
 * (client/test/unit/protocol/signed-message.test.ts parses every message back).
 */
export function createTokenMessage(f: CreateTokenMessageFields): Uint8Array {
  const seed = `createToken:${f.timestamp}:${f.expiresIn ?? ""}:${f.name ?? ""}:${f.userId}`;
  const scopes = f.scopes ?? [];
  const allowedIps = f.allowedIps ?? [];
  return encoder.encode(
    scopes.length === 0 && allowedIps.length === 0
      ? seed
      : `${seed}:${scopes.join(",")}:${allowedIps.join(",")}`,
  );
}

/** `deleteToken:<timestamp>:<tokenId>:<userId>`: data fields in alphabetical order of their keys. */
export function deleteTokenMessage(f: DeleteTokenMessageFields): Uint8Array {
  return encoder.encode(`deleteToken:${f.timestamp}:${f.tokenId}:${f.userId}`);
}
