// Without protobuf, like created-token-detail.ts: the "rest" transport reads
// these details as JSON (clock-offset-connect-detail.ts reads Connect's and gRPC's).
import { ERROR_DOMAIN, TIMESTAMP_OUTSIDE_WINDOW } from "../protocol/error-reason.js";
import { type ErrorInfoFields, errorInfosOfJsonDetails, firstOfErrorInfos } from "./error-info.js";

/** How far the caller's clock is off the service's, from a "Signature expired" refusal. */
export interface ClockOffset {
  /** The request's timestamp minus the service's time, in ms: above 0 the caller is ahead. */
  clockOffsetMs: number;
  /** The service's clock when it checked, Unix ms. */
  serverTimeMs: number;
}

const INTEGER = /^-?\d{1,16}$/;

/** The clock offset an ErrorInfo carries, if it is the service's TIMESTAMP_OUTSIDE_WINDOW. */
export function clockOffsetOf(info: ErrorInfoFields): ClockOffset | undefined {
  if (info.reason !== TIMESTAMP_OUTSIDE_WINDOW || info.domain !== ERROR_DOMAIN) {
    return undefined;
  }
  const metadata = info.metadata;
  if (typeof metadata !== "object" || metadata === null) {
    return undefined;
  }
  const { offsetMs, serverTimeMs } = metadata as Record<string, unknown>;
  if (
    typeof offsetMs !== "string" ||
    typeof serverTimeMs !== "string" ||
    !INTEGER.test(offsetMs) ||
    !INTEGER.test(serverTimeMs)
  ) {
    return undefined;
  }
  return { clockOffsetMs: Number(offsetMs), serverTimeMs: Number(serverTimeMs) };
}

/** The clock offset carried by the `details` of a REST error body, if any. */
export function clockOffsetOfJsonDetails(details: unknown): ClockOffset | undefined {
  return firstOfErrorInfos(errorInfosOfJsonDetails(details), clockOffsetOf);
}
