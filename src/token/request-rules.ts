import { Code, ConnectError } from "@connectrpc/connect";
import type {
  CreateTokenRequest,
  DeleteTokenRequest,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  ALLOW_LIST_SCOPE,
  DEFAULT_SCOPE_MASK,
  parseIpPrefix,
  scopeMask,
  scopesOfMask,
  type TokenScope,
} from "@perps/token-client/protocol";
import { signatureExpired } from "./token-errors.js";

/*
 * The request rules the proto cannot state, checked after its buf.validate
 * rules (src/validation/validation-interceptor.ts has refused any request
 * that breaks those): the default lifetime and the name it requires above
 * it, the configured lifetime limit, the allow-list's addresses and the
 * allow-list that `withdraw` requires, the time window.
 * The signature is verified by the service, the rest by the store.
 */

/** Lifetime of a token whose request omits `expiresIn`: 7 days. */
export const DEFAULT_EXPIRES_IN_SECONDS = 604_800;
/** How far a request's timestamp may be from server time. */
export const TIMESTAMP_TOLERANCE_MS = 120_000n;

export interface RequestRuleOptions {
  /** Longest lifetime a token may be created with, in seconds (TOKEN_MAX_LIFETIME_SECONDS). */
  maxLifetimeSeconds: number;
}

/** A create request that passed the request rules. */
export interface CheckedCreateRequest {
  signature: Uint8Array;
  timestamp: bigint;
  userId: string;
  /** As sent: undefined when omitted (the signed message keeps its slot empty). */
  expiresIn: bigint | undefined;
  /** The lifetime that applies: `expiresIn`, or the default. */
  lifetimeSeconds: number;
  name: string | undefined;
  /** As sent, in its order (signed so); undefined when none. */
  scopes: readonly string[] | undefined;
  /** As sent, in its order (signed so); undefined when none. */
  allowedIps: readonly string[] | undefined;
  /**
   * The scopes the record stores, in TOKEN_SCOPES' order: none for the
   * default ones (read, trade), which every record without scopes has.
   */
  storedScopes: TokenScope[];
}

/** A delete request that passed the request rules. */
export interface CheckedDeleteRequest {
  signature: Uint8Array;
  timestamp: bigint;
  tokenId: string;
  userId: string;
}

function invalid(problems: string[]): ConnectError {
  return new ConnectError(problems.join("; "), Code.InvalidArgument);
}

function hexBytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, "hex"));
}

/** The proto requires it; a call that skipped the validator still gets a client error. */
function present(timestamp: bigint | undefined): bigint {
  if (timestamp === undefined) {
    throw invalid(["timestamp: is required"]);
  }
  return timestamp;
}

/**
 * Create, beyond the proto: the lifetime limit of the configuration, a name
 * above the default lifetime. Throws INVALID_ARGUMENT naming every wrong
 * field. (Lone surrogates never get this far: see checkDeleteRequest.)
 */
export function checkCreateRequest(
  req: CreateTokenRequest,
  opts: RequestRuleOptions,
): CheckedCreateRequest {
  const timestamp = present(req.timestamp);
  const problems: string[] = [];
  const { expiresIn, name } = req;
  if (expiresIn !== undefined) {
    if (expiresIn > BigInt(opts.maxLifetimeSeconds)) {
      problems.push(`expiresIn: must be at most ${opts.maxLifetimeSeconds} seconds`);
    } else if (expiresIn > BigInt(DEFAULT_EXPIRES_IN_SECONDS) && name === undefined) {
      problems.push(
        `name: is required when expiresIn is greater than ${DEFAULT_EXPIRES_IN_SECONDS}`,
      );
    }
  }
  const { scopes, allowedIps } = req;
  for (const [i, text] of allowedIps.entries()) {
    if (parseIpPrefix(text) === undefined) {
      problems.push(
        `allowedIps[${i}]: must be an IPv4 or IPv6 address or a CIDR prefix with its host bits zero (203.0.113.7, 2001:db8::/32)`,
      );
    }
  }
  if (scopes.includes(ALLOW_LIST_SCOPE) && allowedIps.length === 0) {
    problems.push(
      `scopes: "${ALLOW_LIST_SCOPE}" needs allowedIps: bind the token to your servers' addresses`,
    );
  }
  if (problems.length > 0) {
    throw invalid(problems);
  }
  return {
    signature: hexBytes(req.signature),
    timestamp,
    userId: req.userId,
    expiresIn,
    lifetimeSeconds: expiresIn === undefined ? DEFAULT_EXPIRES_IN_SECONDS : Number(expiresIn),
    name,
    scopes: scopes.length === 0 ? undefined : scopes,
    allowedIps: allowedIps.length === 0 ? undefined : allowedIps,
    storedScopes: scopeMask(scopes) === DEFAULT_SCOPE_MASK ? [] : scopesOfMask(scopeMask(scopes)),
  };
}

/**
 * Delete: nothing beyond the proto. A lone surrogate (no UTF-8 form, so
 * unsignable) never gets this far: the REST gateway's strict JSON and
 * protobuf's JSON parser refuse it, and binary protobuf cannot carry one.
 */
export function checkDeleteRequest(req: DeleteTokenRequest): CheckedDeleteRequest {
  const timestamp = present(req.timestamp);
  return {
    signature: hexBytes(req.signature),
    timestamp,
    tokenId: req.tokenId,
    userId: req.userId,
  };
}

/**
 * The request must be signed within ±2 minutes of server time, so a
 * captured request cannot be replayed later.
 */
export function checkTimeWindow(timestamp: bigint, nowMs: number): void {
  const skew = BigInt(nowMs) - timestamp;
  if (skew > TIMESTAMP_TOLERANCE_MS || skew < -TIMESTAMP_TOLERANCE_MS) {
    throw signatureExpired(timestamp, nowMs, TIMESTAMP_TOLERANCE_MS);
  }
}
