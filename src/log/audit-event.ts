import type { HandlerContext } from "@connectrpc/connect";

/**
 * What an operator's action on a user's keys or tokens did, for the audit
 * line (`"msg":"audit"`, info level) the service writes for it. Never holds a
 * secret: user ids, key fingerprints and counts only.
 */
export type AuditEvent =
  | { audit: "PutUserKey"; userId: string; fingerprint: string; stored: boolean }
  | {
      audit: "DeleteUserKey";
      userId: string;
      fingerprint: string;
      removed: boolean;
      revokedTokens: number;
    }
  | { audit: "ListUserKeys"; userId: string; keys: number }
  | { audit: "RevokeUserTokens"; userId: string; revokedTokens: number };

/** Writes the audit line of one call, with the call's request id (from its context). */
export type AuditLog = (event: AuditEvent, context: HandlerContext) => void;
