import type { ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { type ClockOffset, clockOffsetOf } from "./clock-offset-detail.js";

/** The clock offset carried by a Connect or gRPC "Signature expired" error, if any. */
export function clockOffsetOfConnectError(err: ConnectError): ClockOffset | undefined {
  for (const info of err.findDetails(ErrorInfoSchema)) {
    const offset = clockOffsetOf(info);
    if (offset !== undefined) {
      return offset;
    }
  }
  return undefined;
}
