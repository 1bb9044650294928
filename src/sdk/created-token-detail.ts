import type { ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";

/**
 * The `google.rpc.ErrorInfo` with which the service answers a replay of a
 * create it already accepted (ALREADY_EXISTS): its `metadata.tokenId` names
 * the token that request created, so a client whose first answer was lost can
 * delete it and free the name.
 */
export const CREATED_TOKEN_REASON = "TOKEN_ALREADY_CREATED";
/** The `domain` of that ErrorInfo. */
export const CREATED_TOKEN_DOMAIN = "perps-tokens";

const ERROR_INFO_TYPE_URL = `type.googleapis.com/${ErrorInfoSchema.typeName}`;

// Token ids are base64url; anything else is not used (the CLI prints the id
// inside a command line to paste).
const TOKEN_ID = /^[A-Za-z0-9_-]{1,64}$/;

interface ErrorInfoFields {
  reason: unknown;
  domain: unknown;
  metadata: unknown;
}

function tokenIdOf(info: ErrorInfoFields): string | undefined {
  if (info.reason !== CREATED_TOKEN_REASON || info.domain !== CREATED_TOKEN_DOMAIN) {
    return undefined;
  }
  const metadata = info.metadata;
  if (typeof metadata !== "object" || metadata === null || !("tokenId" in metadata)) {
    return undefined;
  }
  const id = metadata.tokenId;
  return typeof id === "string" && TOKEN_ID.test(id) ? id : undefined;
}

/** The created token's id carried by a Connect or gRPC error, if any. */
export function createdTokenIdOfConnectError(err: ConnectError): string | undefined {
  for (const info of err.findDetails(ErrorInfoSchema)) {
    const id = tokenIdOf(info);
    if (id !== undefined) {
      return id;
    }
  }
  return undefined;
}

/** The created token's id carried by the `details` of a REST error body, if any. */
export function createdTokenIdOfJsonDetails(details: unknown): string | undefined {
  if (!Array.isArray(details)) {
    return undefined;
  }
  for (const detail of details as unknown[]) {
    if (typeof detail === "object" && detail !== null && !Array.isArray(detail)) {
      const d = detail as Record<string, unknown>;
      const id =
        d["@type"] === ERROR_INFO_TYPE_URL
          ? tokenIdOf({ reason: d.reason, domain: d.domain, metadata: d.metadata })
          : undefined;
      if (id !== undefined) {
        return id;
      }
    }
  }
  return undefined;
}
