import type { ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { type ClockOffset, clockOffsetOf } from "./clock-offset-detail.js";
import { firstOfErrorInfos } from "./error-info.js";

/** The clock offset carried by a Connect or gRPC "Signature expired" error, if any. */
export function clockOffsetOfConnectError(err: ConnectError): ClockOffset | undefined {
  return firstOfErrorInfos(err.findDetails(ErrorInfoSchema), clockOffsetOf);
}
