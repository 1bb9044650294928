const encoder = new TextEncoder();

/** The fields of a create request that its signature covers, as sent. */
export interface CreateTokenMessageFields {
  timestamp: bigint;
  userId: string;
  /** Undefined when the request omitted it: its slot stays empty even though it defaults. */
  expiresIn: bigint | undefined;
  name: string | undefined;
}

/** The fields of a delete request that its signature covers, as sent. */
export interface DeleteTokenMessageFields {
  timestamp: bigint;
  tokenId: string;
  userId: string;
}

/**
 * `createToken:<timestamp>:<expiresIn>:<name>:<userId>`: data fields in
 * alphabetical order of their keys; an omitted field leaves an empty slot.
 */
export function createTokenMessage(f: CreateTokenMessageFields): Uint8Array {
  return encoder.encode(
    `createToken:${f.timestamp}:${f.expiresIn ?? ""}:${f.name ?? ""}:${f.userId}`,
  );
}

/** `deleteToken:<timestamp>:<tokenId>:<userId>`: data fields in alphabetical order of their keys. */
export function deleteTokenMessage(f: DeleteTokenMessageFields): Uint8Array {
  return encoder.encode(`deleteToken:${f.timestamp}:${f.tokenId}:${f.userId}`);
}
