import { Code, ConnectError } from "@connectrpc/connect";
import type { CreateTokenRequest, DeleteTokenRequest } from "../gen/perps/token/v1/token_pb.js";
import { isValidUserId } from "./user-id.js";

/** Lifetime of a token whose request omits `expiresIn`: 7 days. */
export const DEFAULT_EXPIRES_IN_SECONDS = 604_800;
/** How far a request's timestamp may be from server time. */
export const TIMESTAMP_TOLERANCE_MS = 120_000n;
export const MAX_NAME_LENGTH = 128;
export const MAX_TOKEN_ID_LENGTH = 128;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const SIGNATURE = /^[0-9a-f]{128}$/;
// C0, DEL and C1 controls; lone surrogates cannot be encoded as UTF-8 for signing.
const BAD_NAME_CHARS = /[\p{Cc}\p{Cs}]/u;
// UTF-8 encodes a lone surrogate as U+FFFD, so two ids would share one signed message.
const LONE_SURROGATE = /\p{Cs}/u;

export interface RequestRuleOptions {
  /** Longest lifetime a token may be created with, in seconds (TOKEN_MAX_LIFETIME_SECONDS). */
  maxLifetimeSeconds: number;
}

/** A create request that passed the shape rules. */
export interface CheckedCreateRequest {
  signature: Uint8Array;
  timestamp: bigint;
  userId: string;
  /** As sent: undefined when omitted (the signed message keeps its slot empty). */
  expiresIn: bigint | undefined;
  /** The lifetime that applies: `expiresIn`, or the default. */
  lifetimeSeconds: number;
  name: string | undefined;
}

/** A delete request that passed the shape rules. */
export interface CheckedDeleteRequest {
  signature: Uint8Array;
  timestamp: bigint;
  tokenId: string;
  userId: string;
}

function inSafeRange(value: bigint): boolean {
  return value >= -MAX_SAFE && value <= MAX_SAFE;
}

function checkSignature(signature: string, problems: string[]): void {
  if (!SIGNATURE.test(signature)) {
    problems.push(
      signature.length === 0
        ? "signature: is required"
        : "signature: must be exactly 128 lowercase hex characters, without 0x prefix",
    );
  }
}

function checkTimestamp(timestamp: bigint, problems: string[]): void {
  if (!inSafeRange(timestamp)) {
    problems.push("timestamp: must be an integer between -9007199254740991 and 9007199254740991");
  }
}

function checkUserId(userId: string, problems: string[]): void {
  if (!isValidUserId(userId)) {
    problems.push(
      userId.length === 0
        ? "userId: is required"
        : "userId: must be a UUID (version 1-8, variant 8, 9, a or b; or the nil or all-f UUID)",
    );
  }
}

function checkName(name: string, problems: string[]): void {
  const length = [...name].length;
  if (length === 0 || length > MAX_NAME_LENGTH) {
    problems.push(`name: must be 1 to ${MAX_NAME_LENGTH} characters`);
  } else if (BAD_NAME_CHARS.test(name)) {
    problems.push("name: must not contain control characters or unpaired surrogates");
  }
}

function invalid(problems: string[]): ConnectError {
  return new ConnectError(problems.join("; "), Code.InvalidArgument);
}

function hexBytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, "hex"));
}

/**
 * Rule 1 for create: every field's shape. Throws INVALID_ARGUMENT naming each
 * wrong field and why.
 */
export function checkCreateRequest(
  req: CreateTokenRequest,
  opts: RequestRuleOptions,
): CheckedCreateRequest {
  const problems: string[] = [];
  checkSignature(req.signature, problems);
  checkTimestamp(req.timestamp, problems);
  checkUserId(req.userId, problems);
  const expiresIn = req.expiresIn;
  if (expiresIn !== undefined) {
    if (!inSafeRange(expiresIn)) {
      problems.push("expiresIn: must be an integer between -9007199254740991 and 9007199254740991");
    } else if (expiresIn <= 0n) {
      problems.push("expiresIn: must be greater than 0");
    } else if (expiresIn > BigInt(opts.maxLifetimeSeconds)) {
      problems.push(`expiresIn: must be at most ${opts.maxLifetimeSeconds} seconds`);
    } else if (expiresIn > BigInt(DEFAULT_EXPIRES_IN_SECONDS) && req.name === undefined) {
      problems.push(
        `name: is required when expiresIn is greater than ${DEFAULT_EXPIRES_IN_SECONDS}`,
      );
    }
  }
  if (req.name !== undefined) {
    checkName(req.name, problems);
  }
  if (problems.length > 0) {
    throw invalid(problems);
  }
  return {
    signature: hexBytes(req.signature),
    timestamp: req.timestamp,
    userId: req.userId,
    expiresIn,
    lifetimeSeconds: expiresIn === undefined ? DEFAULT_EXPIRES_IN_SECONDS : Number(expiresIn),
    name: req.name,
  };
}

/** Rule 1 for delete: every field's shape. Throws INVALID_ARGUMENT naming each wrong field. */
export function checkDeleteRequest(req: DeleteTokenRequest): CheckedDeleteRequest {
  const problems: string[] = [];
  checkSignature(req.signature, problems);
  checkTimestamp(req.timestamp, problems);
  if (req.tokenId.length === 0) {
    problems.push("tokenId: is required");
  } else if ([...req.tokenId].length > MAX_TOKEN_ID_LENGTH) {
    problems.push(`tokenId: must be at most ${MAX_TOKEN_ID_LENGTH} characters`);
  } else if (LONE_SURROGATE.test(req.tokenId)) {
    problems.push("tokenId: must not contain unpaired surrogates");
  }
  checkUserId(req.userId, problems);
  if (problems.length > 0) {
    throw invalid(problems);
  }
  return {
    signature: hexBytes(req.signature),
    timestamp: req.timestamp,
    tokenId: req.tokenId,
    userId: req.userId,
  };
}

/**
 * Rule 2: the request must be signed within ±2 minutes of server time, so a
 * captured request cannot be replayed later.
 */
export function checkTimeWindow(timestamp: bigint, nowMs: number): void {
  const skew = BigInt(nowMs) - timestamp;
  if (skew > TIMESTAMP_TOLERANCE_MS || skew < -TIMESTAMP_TOLERANCE_MS) {
    throw new ConnectError("Signature expired", Code.Unauthenticated);
  }
}
