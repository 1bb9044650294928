import type { ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { tokenIdOf } from "./created-token-detail.js";
import { firstOfErrorInfos } from "./error-info.js";

/** The created token's id carried by a Connect or gRPC error, if any. */
export function createdTokenIdOfConnectError(err: ConnectError): string | undefined {
  return firstOfErrorInfos(err.findDetails(ErrorInfoSchema), tokenIdOf);
}
