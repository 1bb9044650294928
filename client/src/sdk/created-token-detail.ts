// Without protobuf: the "rest" transport reads these details as JSON, and a
// browser bundle of it need not carry protobuf's runtime (see
// created-token-connect-detail.ts for the Connect and gRPC side).
import { ERROR_DOMAIN, TOKEN_ALREADY_CREATED } from "../protocol/error-reason.js";
import { type ErrorInfoFields, errorInfosOfJsonDetails, firstOfErrorInfos } from "./error-info.js";

// Token ids are base64url; anything else is not used (the CLI prints the id
// inside a command line to paste).
const TOKEN_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The created token's id an ErrorInfo names, if it is the service's TOKEN_ALREADY_CREATED. */
export function tokenIdOf(info: ErrorInfoFields): string | undefined {
  if (info.reason !== TOKEN_ALREADY_CREATED || info.domain !== ERROR_DOMAIN) {
    return undefined;
  }
  const metadata = info.metadata;
  if (typeof metadata !== "object" || metadata === null || !("tokenId" in metadata)) {
    return undefined;
  }
  const id = metadata.tokenId;
  return typeof id === "string" && TOKEN_ID.test(id) ? id : undefined;
}

/** The created token's id carried by the `details` of a REST error body, if any. */
export function createdTokenIdOfJsonDetails(details: unknown): string | undefined {
  return firstOfErrorInfos(errorInfosOfJsonDetails(details), tokenIdOf);
}
