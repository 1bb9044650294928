import { randomUUID } from "node:crypto";
import * as ed from "@noble/ed25519";
import { createTokenMessage, deleteTokenMessage } from "@perps/token-client/protocol";

export interface TestUser {
  userId: string;
  secretKey: Uint8Array;
  publicKey: string;
}

/** A user with a fresh Ed25519 key pair (signing with @noble/ed25519, as clients do). */
export async function newUser(userId: string = randomUUID()): Promise<TestUser> {
  const { secretKey, publicKey } = await ed.keygenAsync();
  return { userId, secretKey, publicKey: Buffer.from(publicKey).toString("hex") };
}

/** Every signature this test process made, so that logs can be checked for all of them. */
export const issuedSignatures = new Set<string>();

export async function signBytes(secretKey: Uint8Array, message: Uint8Array): Promise<string> {
  const signature = Buffer.from(await ed.signAsync(message, secretKey)).toString("hex");
  issuedSignatures.add(signature);
  return signature;
}

export async function signText(secretKey: Uint8Array, message: string): Promise<string> {
  return signBytes(secretKey, new TextEncoder().encode(message));
}

export interface CreateFields {
  timestamp?: bigint;
  expiresIn?: bigint;
  name?: string;
  /** Sign this userId instead of the user's own (it is also what is sent). */
  userId?: string;
  scopes?: string[];
  allowedIps?: string[];
}

/** A signed create request as the protobuf message's fields. */
export async function signedCreate(user: TestUser, fields: CreateFields = {}) {
  const timestamp = fields.timestamp ?? BigInt(Date.now());
  const userId = fields.userId ?? user.userId;
  const signature = await signBytes(
    user.secretKey,
    createTokenMessage({
      timestamp,
      userId,
      expiresIn: fields.expiresIn,
      name: fields.name,
      scopes: fields.scopes,
      allowedIps: fields.allowedIps,
    }),
  );
  return {
    signature,
    timestamp,
    userId,
    ...(fields.expiresIn === undefined ? {} : { expiresIn: fields.expiresIn }),
    ...(fields.name === undefined ? {} : { name: fields.name }),
    ...(fields.scopes === undefined ? {} : { scopes: fields.scopes }),
    ...(fields.allowedIps === undefined ? {} : { allowedIps: fields.allowedIps }),
  };
}

/** A signed delete request as the protobuf message's fields. */
export async function signedDelete(
  user: TestUser,
  tokenId: string,
  fields: { timestamp?: bigint; userId?: string } = {},
) {
  const timestamp = fields.timestamp ?? BigInt(Date.now());
  const userId = fields.userId ?? user.userId;
  const signature = await signBytes(
    user.secretKey,
    deleteTokenMessage({ timestamp, tokenId, userId }),
  );
  return { signature, timestamp, tokenId, userId };
}
