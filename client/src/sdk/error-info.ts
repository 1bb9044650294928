// Without protobuf, like the detail readers that use it: the "rest" transport
// reads error details as JSON, and a browser bundle of it need not carry
// protobuf's runtime.
import { ERROR_INFO_TYPE_URL } from "../protocol/error-reason.js";

/** The fields of a google.rpc.ErrorInfo the SDK reads, from JSON or from protobuf. */
export interface ErrorInfoFields {
  reason: unknown;
  domain: unknown;
  metadata: unknown;
}

/** The ErrorInfos among the `details` of a REST error body, in order. */
export function errorInfosOfJsonDetails(details: unknown): ErrorInfoFields[] {
  if (!Array.isArray(details)) {
    return [];
  }
  const infos: ErrorInfoFields[] = [];
  for (const detail of details as unknown[]) {
    if (typeof detail === "object" && detail !== null && !Array.isArray(detail)) {
      const d = detail as Record<string, unknown>;
      if (d["@type"] === ERROR_INFO_TYPE_URL) {
        infos.push({ reason: d.reason, domain: d.domain, metadata: d.metadata });
      }
    }
  }
  return infos;
}

/** The first thing `read` finds in one of `infos`, if any. */
export function firstOfErrorInfos<T>(
  infos: Iterable<ErrorInfoFields>,
  read: (info: ErrorInfoFields) => T | undefined,
): T | undefined {
  for (const info of infos) {
    const found = read(info);
    if (found !== undefined) {
      return found;
    }
  }
  return undefined;
}
